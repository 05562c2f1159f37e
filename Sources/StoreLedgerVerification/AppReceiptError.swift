/// A legacy app receipt could not be read, in the extensible-struct shape every error of the package shares: new codes
/// can be added without breaking callers that switch on ``code``.
package struct AppReceiptError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the receipt.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case notBase64, malformed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The receipt is not base64 text.
        package static let notBase64 = Code(.notBase64)
        /// The bytes are neither a well-formed PKCS#7 app receipt (structure, fields or payload) nor a transaction
        /// receipt's property list with its purchase-info.
        package static let malformed = Code(.malformed)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// What is wrong with it.
    package let detail: String

    /// Creates an error with a code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The detail alone (it is shown to the app that posted the receipt).
    package var description: String { detail }
}
