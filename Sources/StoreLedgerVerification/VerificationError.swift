/// Why a piece of App Store signed data was not accepted.
///
/// An extensible error struct: callers branch on ``code`` (compare with the static members of
/// ``VerificationError/Code``) and log ``detail``. New codes can be added without breaking callers.
package struct VerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; compare against the static members.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformed
            case badSignature
            case untrustedChain
            case wrongApp
            case wrongEnvironment
            case retryable
            case invalidConfiguration
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// Not a compact ES256 JWS with a 3-certificate `x5c` header, or its JSON cannot be read.
        /// Unsupported algorithms (`none`, `HS256`, …) are reported here too.
        package static let malformed = Self(.malformed)
        /// The chain is trusted but the ES256 signature does not match the signed bytes.
        package static let badSignature = Self(.badSignature)
        /// The `x5c` chain does not lead to a configured root, lacks Apple's OIDs, or was not valid at `signedDate`.
        package static let untrustedChain = Self(.untrustedChain)
        /// The data is genuine but belongs to an app that is not configured (bundle id or app Apple id).
        package static let wrongApp = Self(.wrongApp)
        /// The data is genuine but was signed for another environment than the configured one.
        package static let wrongEnvironment = Self(.wrongEnvironment)
        /// Verification could not complete (e.g. an OCSP responder was unreachable): try again later.
        package static let retryable = Self(.retryable)
        /// The verifier's own configuration is unusable (no roots, unreadable root, missing app Apple id).
        package static let invalidConfiguration = Self(.invalidConfiguration)

        /// The stable machine-readable name of the code, e.g. `badSignature`.
        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human-readable explanation, safe to log (it never contains key material).
    package let detail: String

    /// Creates an error with the given code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`, e.g. `badSignature: ES256 signature does not match the signed bytes`.
    package var description: String { "\(code): \(detail)" }

    /// Whether trying the same input again later may succeed.
    package var isRetryable: Bool { code == .retryable }
}

extension VerificationError {
    /// A malformed-input error.
    static func malformed(_ detail: String) -> Self { .init(.malformed, detail) }
    /// A bad-signature error.
    static func badSignature(_ detail: String) -> Self { .init(.badSignature, detail) }
    /// An untrusted-chain error.
    static func untrustedChain(_ detail: String) -> Self { .init(.untrustedChain, detail) }
    /// A wrong-app error.
    static func wrongApp(_ detail: String) -> Self { .init(.wrongApp, detail) }
    /// A wrong-environment error.
    static func wrongEnvironment(_ detail: String) -> Self { .init(.wrongEnvironment, detail) }
    /// An invalid-configuration error.
    static func invalidConfiguration(_ detail: String) -> Self { .init(.invalidConfiguration, detail) }

    /// The same error with `context: ` prepended to the detail (used for nested JWS).
    func prefixed(_ context: String) -> Self { .init(code, "\(context): \(detail)") }
}
