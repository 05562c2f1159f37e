/// An App Store Server API failure, in the extensible-struct shape: Apple's error codes and HTTP statuses mapped
/// to stable codes, with Apple's own code and message kept.
package struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case transactionNotFound, invalidTransactionID, rateLimited, retryableServerError, serverError, notFoundYet, unauthorized,
                notFound, badRequest, network, timeout, malformedResponse, configuration
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// 4040010: no such transaction in this environment (try the other).
        package static let transactionNotFound = Code(.transactionNotFound)
        /// 4000006: the transaction id is not valid.
        package static let invalidTransactionID = Code(.invalidTransactionID)
        /// HTTP 429 / 4290000.
        package static let rateLimited = Code(.rateLimited)
        /// 5000001 or another 5xx (without Apple's 5000000).
        package static let retryableServerError = Code(.retryableServerError)
        /// 5000000, Apple's GeneralInternalError: unlike 5000001 (GeneralInternalRetryableError), Apple does not say to try
        /// again, so the request is not retried at once; the caller answers 503 and a later request or run asks anew.
        package static let serverError = Code(.serverError)
        /// 4040002, 4040004 or 4040006: Apple does not find the account, the app or the original transaction *yet*
        /// and says to try again (its own libraries retry these): not an answer that the purchase does not exist.
        package static let notFoundYet = Code(.notFoundYet)
        /// HTTP 401: the token was refused (wrong key or issuer) or, in production, the app is not yet released.
        package static let unauthorized = Code(.unauthorized)
        /// Another 404 with Apple's error body (e.g. 4040005: no such original transaction).
        package static let notFound = Code(.notFound)
        /// Another 4xx.
        package static let badRequest = Code(.badRequest)
        /// The host could not be reached.
        package static let network = Code(.network)
        /// No answer within the request timeout.
        package static let timeout = Code(.timeout)
        /// The answer is not what Apple documents.
        package static let malformedResponse = Code(.malformedResponse)
        /// The client is not configured correctly (e.g. the private key does not parse).
        package static let configuration = Code(.configuration)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The code.
    package let code: Code
    /// What happened and what to do.
    package let detail: String
    /// The HTTP status, when Apple answered.
    package var httpStatus: Int?
    /// Apple's `errorCode`, when it sent one.
    package var appleErrorCode: Int?
    /// Apple's `errorMessage`, when it sent one.
    package var appleErrorMessage: String?

    /// Creates an error.
    package init(_ code: Code, _ detail: String, httpStatus: Int? = nil, appleErrorCode: Int? = nil, appleErrorMessage: String? = nil) {
        self.code = code
        self.detail = detail
        self.httpStatus = httpStatus
        self.appleErrorCode = appleErrorCode
        self.appleErrorMessage = appleErrorMessage
    }

    /// Whether another attempt may succeed.
    package var isRetryable: Bool {
        code == .rateLimited || code == .retryableServerError || code == .notFoundYet || code == .network || code == .timeout
    }

    /// `code: detail (HTTP s, Apple n: message)`.
    package var description: String {
        var text = "\(code): \(detail)"
        var extras: [String] = []
        if let httpStatus { extras.append("HTTP \(httpStatus)") }
        if let appleErrorCode { extras.append("Apple \(appleErrorCode)" + (appleErrorMessage.map { ": \($0)" } ?? "")) }
        if !extras.isEmpty { text += " (\(extras.joined(separator: ", ")))" }
        return text
    }

    /// Classifies an error answer from its status and Apple's `{errorCode, errorMessage}`.
    static func from(status: Int, appleCode: Int?, message: String?) -> AppStoreAPIError {
        let code: Code
        switch (status, appleCode) {
        case (_, 4_040_010): code = .transactionNotFound
        case (_, 4_000_006): code = .invalidTransactionID
        case (429, _), (_, 4_290_000): code = .rateLimited
        case (_, 5_000_001): code = .retryableServerError
        case (_, 5_000_000): code = .serverError
        case (_, 4_040_002), (_, 4_040_004), (_, 4_040_006): code = .notFoundYet
        case (401, _): code = .unauthorized
        case (404, .some): code = .notFound
        case (404, nil):
            // Apple answers every 404 with its error body; one without it came from something else (a wrong
            // APPSTORE_API_URL, a proxy), not from Apple saying the purchase does not exist.
            return AppStoreAPIError(
                .malformedResponse, "the App Store Server API answered 404 without Apple's error body (is APPSTORE_API_URL right?)",
                httpStatus: status, appleErrorMessage: message)
        case (500..., _): code = .retryableServerError
        default: code = .badRequest
        }
        return AppStoreAPIError(
            code, "the App Store Server API answered \(status)", httpStatus: status, appleErrorCode: appleCode, appleErrorMessage: message)
    }
}
