public import StoreLedgerCore
public import StoreLedgerVerification

/// One verifier per accepted environment (a deployment receives Production and Sandbox data), tried
/// in the order the event's route suggests. Data claiming an environment no verifier accepts is
/// rejected as the wrong environment.
public struct LedgerVerifiers: Sendable {
    /// The verifiers, one per environment.
    public let verifiers: [SignedDataVerifier]

    /// Wraps verifiers (at least one).
    public init(_ verifiers: [SignedDataVerifier]) {
        precondition(!verifiers.isEmpty, "LedgerVerifiers needs at least one verifier")
        self.verifiers = verifiers
    }

    /// Builds one verifier per environment for the same apps and trust.
    public init(
        apps: [AppIdentity],
        environments: [VerificationEnvironment],
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false
    ) throws(VerificationError) {
        guard !environments.isEmpty else { throw VerificationError(.invalidConfiguration, "no environment is accepted") }
        var verifiers: [SignedDataVerifier] = []
        for environment in environments {
            verifiers.append(try SignedDataVerifier(configuration: VerifierConfiguration(
                apps: apps, environment: environment, trust: trust, allowXcodeEnvironment: allowXcodeEnvironment
            )))
        }
        self.init(verifiers)
    }

    /// Verifies a notification with the verifier its environment calls for.
    public func verifyNotification(_ jws: String, hint: EnvironmentHint?) async throws(VerificationError) -> VerifiedNotification {
        try await firstAccepting(hint: hint) { verifier throws(VerificationError) in try await verifier.verifyNotification(jws) }
    }

    /// Verifies a standalone transaction.
    public func verifyTransaction(_ jws: String, hint: EnvironmentHint?) async throws(VerificationError) -> VerifiedSignedData {
        try await firstAccepting(hint: hint) { verifier throws(VerificationError) in try await verifier.verifyTransaction(jws) }
    }

    /// Verifies a standalone renewal info.
    public func verifyRenewalInfo(_ jws: String, hint: EnvironmentHint?) async throws(VerificationError) -> VerifiedSignedData {
        try await firstAccepting(hint: hint) { verifier throws(VerificationError) in try await verifier.verifyRenewalInfo(jws) }
    }

    private func firstAccepting<Result>(
        hint: EnvironmentHint?,
        _ verify: (SignedDataVerifier) async throws(VerificationError) -> Result
    ) async throws(VerificationError) -> Result {
        var lastError: VerificationError?
        for verifier in ordered(for: hint) {
            do {
                return try await verify(verifier)
            } catch where error.code == .wrongEnvironment {
                lastError = error
            }
        }
        throw lastError ?? VerificationError(.invalidConfiguration, "no verifier")
    }

    private func ordered(for hint: EnvironmentHint?) -> [SignedDataVerifier] {
        guard let hint else { return verifiers }
        let preferred: VerificationEnvironment = hint == .sandbox ? .sandbox : .production
        return verifiers.filter { $0.configuration.environment == preferred } + verifiers.filter { $0.configuration.environment != preferred }
    }
}
