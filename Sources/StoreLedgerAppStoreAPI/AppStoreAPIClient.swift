package import AsyncHTTPClient
package import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1

/// A client of Apple's App Store Server API on AsyncHTTPClient: a fresh ES256 token per request, typed errors for
/// Apple's codes, retries with exponential backoff and full jitter on 429, 5000001, 5xx, Apple's "not found, try again"
/// and network errors.
///
/// Everything it returns that Apple signed is returned as JWS, unverified: callers hand it to the ledger, which
/// verifies it like any other input.
package struct AppStoreAPIClient: Sendable {
    /// The configuration.
    package let configuration: AppStoreAPIConfiguration
    private let httpClient: HTTPClient
    private let keys: JWTKeyCollection
    private let gate = RetryAfterGate()

    /// Creates a client; throws ``AppStoreAPIError/Code/configuration`` when the private key does not parse.
    package init(configuration: AppStoreAPIConfiguration, httpClient: HTTPClient = .shared) async throws(AppStoreAPIError) {
        let key: ES256PrivateKey
        do {
            key = try ES256PrivateKey(pem: configuration.privateKeyPEM)
        } catch {
            throw AppStoreAPIError(
                .configuration, "APPSTORE_PRIVATE_KEY is not a P-256 private key in PKCS#8 PEM (the .p8 file App Store Connect gives you)")
        }
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key, kid: JWKIdentifier(string: configuration.keyID))
        self.configuration = configuration
        self.httpClient = httpClient
        self.keys = keys
    }

    /// When the calls of the current task must have ended, if anything set it (``withDeadline(_:_:)``): an app's
    /// request waits for the lookups it causes, and its client (or the load balancer in front) gives up after a
    /// minute or less, so a request's calls stop retrying and time out by then rather than retry past it.
    @TaskLocal package static var deadline: ContinuousClock.Instant?

    /// Runs `body` with its calls bound to end within `budget` from now (or by an earlier deadline already set):
    /// no attempt starts after it, no retry waits past it, and each attempt's timeout is cut to what is left. A call
    /// that runs out answers ``AppStoreAPIError/Code/timeout``.
    package static func withDeadline<T>(_ budget: Duration, _ body: () async throws -> T) async rethrows -> T {
        let ours = ContinuousClock.now + budget
        return try await $deadline.withValue(deadline.map { min($0, ours) } ?? ours, operation: body)
    }

    /// The body (at most 4 MiB), read within `limit`: AsyncHTTPClient's timeout ends with the response head, and its
    /// read timeout restarts with every chunk, so a body that stalls or trickles after its head would otherwise hold
    /// the call, and the app request waiting on it, past its deadline. Past `limit`: ``HTTPClientError/deadlineExceeded``.
    static func collect(_ body: HTTPClientResponse.Body, within limit: Duration) async throws -> ByteBuffer {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await body.collect(upTo: 4 << 20) }
            group.addTask {
                try await Task.sleep(for: max(limit, .zero))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let bytes = first else { throw HTTPClientError.deadlineExceeded }
            return bytes
        }
    }

    /// A fresh bearer token (5 minutes).
    func token() async throws(AppStoreAPIError) -> String {
        let now = Int64(Date().timeIntervalSince1970)
        var header = JWTHeader()
        header.typ = "JWT"
        do {
            return try await keys.sign(
                AppStoreAPIToken(iss: configuration.issuerID, iat: now, exp: now + 300, aud: "appstoreconnect-v1", bid: configuration.bundleID),
                kid: JWKIdentifier(string: configuration.keyID), header: header
            )
        } catch {
            throw AppStoreAPIError(.configuration, "could not sign the App Store Server API token: \(error)")
        }
    }

    /// Sends one call to `endpoint` (Apple's name for it: its rate limit is per endpoint), retrying what may pass, and
    /// decodes Apple's JSON answer as `Response`. While the endpoint's last `Retry-After` in this environment is ahead,
    /// the call waits for it when that is within `maximumBackoff` (and the deadline), else fails at once as
    /// ``AppStoreAPIError/Code/rateLimited`` without asking Apple.
    func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, endpoint: String, query: [(String, String)] = [], body: (some Encodable)? = Optional<Int>.none,
        environment: AppStoreAPIHost, logger: Logger, as: Response.Type = Response.self
    ) async throws(AppStoreAPIError) -> Response {
        var attempt = 0
        let deadline = Self.deadline
        let gateKey = "\(environment.rawValue) \(endpoint)"
        while true {
            attempt += 1
            if let until = gate.closedUntil(gateKey) {
                let wait = ContinuousClock.now.duration(to: until)
                if wait > configuration.maximumBackoff || deadline.map({ until >= $0 }) == true {
                    throw AppStoreAPIError(
                        .rateLimited, "Apple's rate limit: \(endpoint) (\(environment.rawValue)) may be asked again in \(wait) (its last Retry-After)"
                    )
                }
                try? await Task.sleep(until: until)
            }
            if let deadline, ContinuousClock.now >= deadline {
                throw AppStoreAPIError(.timeout, "the request's time for the App Store Server API ran out (\(environment.rawValue) \(path))")
            }
            do {
                return try await sendOnce(method, path, query: query, body: body, environment: environment, attempt: attempt, logger: logger)
            } catch let failure {
                if failure.error.code == .rateLimited, let retryAfter = failure.retryAfter, retryAfter > .zero {
                    gate.close(gateKey, until: .now + retryAfter)
                }
                guard failure.error.isRetryable, attempt < configuration.maximumAttempts else { throw failure.error }
                // Apple's Retry-After says when it will answer again; a wait longer than any backoff of ours is not
                // spent asking early (each early ask counts against the hourly limit): the caller gets the error now.
                if let retryAfter = failure.retryAfter, retryAfter > configuration.maximumBackoff { throw failure.error }
                let delay = backoff(afterAttempt: attempt, retryAfter: failure.retryAfter)
                // A retry that could not start before the deadline is not waited for.
                if let deadline, ContinuousClock.now + delay >= deadline { throw failure.error }
                logger.notice(
                    "App Store Server API call failed; retrying",
                    metadata: [
                        "path": "\(path)", "attempt": "\(attempt)", "error": "\(failure.error.code)",
                        "delay_ms": "\(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)",
                    ])
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// Apple's error body.
    struct AppleErrorBody: Decodable {
        var errorCode: Int?
        var errorMessage: String?
    }

    /// A failed attempt and the server's `Retry-After`, if any.
    struct Failure: Error {
        let error: AppStoreAPIError
        var retryAfter: Duration? = nil
    }

    private func sendOnce<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, query: [(String, String)], body: (some Encodable)?,
        environment: AppStoreAPIHost, attempt: Int, logger: Logger
    ) async throws(Failure) -> Response {
        var url = configuration.baseURL(environment) + path
        if !query.isEmpty {
            var components = URLComponents()
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            url += "?" + (components.percentEncodedQuery ?? "")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        do {
            request.headers.add(name: "Authorization", value: "Bearer \(try await token())")
        } catch {
            throw Failure(error: error)
        }
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "StoreLedger/1")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            guard let data = try? JSONEncoder().encode(body) else {
                throw Failure(error: AppStoreAPIError(.configuration, "the request body does not encode"))
            }
            request.body = .bytes(ByteBuffer(bytes: data))
        }
        let allowed = Self.deadline.map { min(configuration.requestTimeout, ContinuousClock.now.duration(to: $0)) } ?? configuration.requestTimeout
        let timeout = TimeAmount(max(allowed, .nanoseconds(1)))
        let status: Int
        let bytes: ByteBuffer
        let retryAfter: Duration?
        do {
            let started = ContinuousClock.now
            let response = try await httpClient.execute(request, timeout: timeout)
            status = Int(response.status.code)
            retryAfter = response.headers.first(name: "Retry-After").flatMap {
                Self.retryAfter($0, now: Self.referenceNow(dateHeader: response.headers.first(name: "Date")))
            }
            bytes = try await Self.collect(response.body, within: allowed - started.duration(to: .now))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw Failure(error: AppStoreAPIError(.timeout, "no answer from \(environment.rawValue) within \(allowed)"))
        } catch {
            throw Failure(error: AppStoreAPIError(.network, "could not reach the App Store Server API (\(environment.rawValue)): \(error)"))
        }
        logger.debug(
            "App Store Server API",
            metadata: [
                "method": "\(method.rawValue)", "path": "\(path)", "environment": "\(environment.rawValue)", "status": "\(status)",
                "attempt": "\(attempt)",
            ])
        let data = Data(bytes.readableBytesView)
        guard (200..<300).contains(status) else {
            let apple = try? JSONDecoder().decode(AppleErrorBody.self, from: data)
            throw Failure(error: .from(status: status, appleCode: apple?.errorCode, message: apple?.errorMessage), retryAfter: retryAfter)
        }
        do {
            return try JSONDecoder().decode(Response.self, from: data)
        } catch {
            throw Failure(
                error: AppStoreAPIError(.malformedResponse, "the answer to \(path) does not decode as \(Response.self): \(error)", httpStatus: status)
            )
        }
    }

    /// How long a `Retry-After` value asks to wait from `now`; nil when it is none of the forms below. Apple's App Store
    /// Server API sends "a UNIX time, in milliseconds, that informs you when you can next send a request"
    /// (Identifying rate limits); a proxy in between may send HTTP's own forms, delay-seconds or an HTTP-date. A plain
    /// number is a UNIX time in milliseconds when it is one of this century (at least 10¹¹: 1973), else seconds. A time
    /// already past asks for no wait.
    package static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let number = UInt64(text) {
            guard number >= 100_000_000_000 else { return .seconds(Int64(min(number, 1 << 40))) }
            let milliseconds = Double(number) - (now.timeIntervalSince1970 * 1000).rounded(.down)
            return .milliseconds(Int64(max(0, min(milliseconds, 1e12))))
        }
        guard let date = httpDate(text) else { return nil }
        return .milliseconds(Int64(max(0, min(date.timeIntervalSince(now) * 1000, 1e12))))
    }

    /// The instant a `Retry-After` time is measured from: this host's clock, unless the answer's `Date` says Apple's is
    /// more than 2 s ahead of it (this host's clock is behind, and every wait would read too long), then Apple's. A
    /// `Date` behind this clock is not used: it has whole seconds, and a server may send the same one for a second or,
    /// loaded, longer (Hummingbird caches it), which would make waits read too long. The cost: on a host whose clock
    /// runs ahead of Apple's by d, every wait reads d too short (a wait shorter than d not at all), so retries ask
    /// Apple early; keep the host's clock synchronised (NTP).
    package static func referenceNow(dateHeader: String?, local: Date = Date()) -> Date {
        guard let server = dateHeader.flatMap(httpDate), server.timeIntervalSince(local) > 2 else { return local }
        return server
    }

    /// An HTTP-date in any of the three forms RFC 9110 (5.6.7) has recipients accept: IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
    /// (`Sun Nov  6 08:49:37 1994`); nil for anything else.
    package static func httpDate(_ text: String) -> Date? {
        let text = text.trimmingCharacters(in: .whitespaces)
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.replacingOccurrences(of: "  ", with: " ")) { return date }
        }
        return nil
    }

    /// Exponential backoff with full jitter, and at least the server's `Retry-After` when it sent one (a time already
    /// past on this host's clock still gets the jittered wait, so retries neither go out at once nor in step);
    /// ``send(_:_:endpoint:query:body:environment:logger:as:)`` gives up instead of waiting longer than `maximumBackoff`.
    package func backoff(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        let ceiling = min(configuration.initialBackoff * (1 << min(attempt - 1, 16)), configuration.maximumBackoff)
        let milliseconds = ceiling.components.seconds * 1000 + ceiling.components.attoseconds / 1_000_000_000_000_000
        let jittered = Duration.milliseconds(Int64.random(in: 0...max(1, milliseconds)))
        guard let retryAfter else { return jittered }
        return max(min(retryAfter, configuration.maximumBackoff), jittered)
    }
}
