/// Why the simulator or the development CA could not do what was asked.
///
/// An extensible error struct: callers branch on ``code`` (compare with the static members of
/// ``SimulationError/Code``) and show ``detail``. New codes can be added without breaking callers.
package struct SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure; compare against the static members.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidCertificateAuthority
            case fileSystem
            case signing
            case remoteTargetRefused
            case invalidTarget
            case invalidOptions
            case outdatedCertificateAuthority
        }

        private let base: Base

        private init(_ base: Base) {
            self.base = base
        }

        /// The development CA on disk is incomplete or inconsistent (a key does not match its certificate, …).
        package static let invalidCertificateAuthority = Self(.invalidCertificateAuthority)
        /// The development CA could not be read or written.
        package static let fileSystem = Self(.fileSystem)
        /// A payload could not be encoded or signed.
        package static let signing = Self(.signing)
        /// The target is not a loopback address and remote delivery was not allowed.
        package static let remoteTargetRefused = Self(.remoteTargetRefused)
        /// The target URL is not an `http` / `https` URL with a host.
        package static let invalidTarget = Self(.invalidTarget)
        /// The simulation options are out of range or contradictory.
        package static let invalidOptions = Self(.invalidOptions)
        /// The development CA's validity does not cover the dates a run would sign (e.g. minted by an older
        /// StoreLedger that covered only five years of history).
        package static let outdatedCertificateAuthority = Self(.outdatedCertificateAuthority)

        /// The stable machine-readable name of the code, e.g. `remoteTargetRefused`.
        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// A human-readable explanation (it never contains key material).
    package let detail: String

    /// Creates an error with the given code and detail.
    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// `code: detail`.
    package var description: String { "\(code): \(detail)" }
}
