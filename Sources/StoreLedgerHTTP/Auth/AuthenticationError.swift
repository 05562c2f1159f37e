/// Why the app-facing API's authentication could not be configured, in the extensible-struct shape: new codes can be
/// added without breaking callers that switch on ``code``.
package struct AuthenticationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of authentication error this is.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case weakSecret, unsupportedKey
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// `AUTH_JWT_SECRET` is shorter than HS256 needs.
        package static let weakSecret = Code(.weakSecret)
        /// `AUTH_JWT_PUBLIC_KEY` is not a key of a supported algorithm.
        package static let unsupportedKey = Code(.unsupportedKey)

        /// The code's name.
        package var description: String { base.rawValue }
    }

    /// The error's code.
    package let code: Code
    /// What is wrong and what to do.
    package let detail: String

    /// Creates an error with a code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    package var description: String { "\(code): \(detail)" }
}
