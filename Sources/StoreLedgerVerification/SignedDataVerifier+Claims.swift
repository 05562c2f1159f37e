import StoreLedgerCore

extension SignedDataVerifier {
    /// Checks a payload's claims in the order that names the real cause: the app (`bundleId` must be a configured
    /// app, whatever the environment), then the environment the payload is signed for (it must be accepted), then
    /// what that environment's rules ask: for Production data only, `appAppleId` must be the app's Apple ID. Sandbox,
    /// Xcode and LocalTesting data, which Apple sends without `appAppleId`, is never asked for one.
    ///
    /// - Parameters:
    ///   - environment: The environment the payload is signed for.
    ///   - isLocalTestData: Accepted as Xcode / LocalTesting data (only when allowed).
    ///   - checksAppAppleID: Whether this kind of payload carries `appAppleId` (transactions and renewal infos do not).
    func checkClaims(
        bundleID: String?, appAppleID: Int64?, environment: String?, isLocalTestData: Bool, checksAppAppleID: Bool
    ) throws(VerificationError) {
        guard let bundleID else {
            throw .wrongApp("the payload carries no bundleId")
        }
        let candidates = configuration.apps.filter { $0.bundleID == bundleID }
        guard !candidates.isEmpty else {
            let configured = configuration.apps.map(\.bundleID).joined(separator: ", ")
            throw .wrongApp("bundleId '\(bundleID)' is not a configured app (configured: \(configured))")
        }
        try checkEnvironment(environment, isLocalTestData: isLocalTestData)
        guard checksAppAppleID, !isLocalTestData, environment == AppStoreEnvironment.production.rawValue else {
            return
        }
        let configured = candidates.compactMap(\.appAppleID).map(String.init).joined(separator: ", ")
        guard let appAppleID else {
            throw .wrongApp("signed for Production without an appAppleId; Production data of '\(bundleID)' must carry \(configured)")
        }
        guard candidates.contains(where: { $0.appAppleID == appAppleID }) else {
            throw .wrongApp("appAppleId \(appAppleID) is not the configured Apple id of '\(bundleID)' (\(configured))")
        }
    }

    /// Checks the payload is signed for an accepted environment (local test data was already let through by
    /// ``authenticate(_:environmentOf:)`` only when allowed).
    func checkEnvironment(_ environment: String?, isLocalTestData: Bool) throws(VerificationError) {
        guard !isLocalTestData else { return }
        guard let environment else {
            throw .wrongEnvironment(
                "the payload states no environment, so no environment's rules apply (\(configuration.acceptedEnvironmentsDescription))"
            )
        }
        guard configuration.environments.contains(AppStoreEnvironment(rawValue: environment)) else {
            throw .wrongEnvironment(
                "signed for \(environment), which this deployment does not accept (\(configuration.acceptedEnvironmentsDescription))"
            )
        }
    }

    /// A nested JWS must be signed for the same environment as the notification carrying it.
    static func checkSameEnvironment(nested: String?, outer: String?) throws(VerificationError) {
        guard nested != outer else { return }
        throw .wrongEnvironment("signed for \(nested ?? "no environment") inside a notification signed for \(outer ?? "no environment")")
    }

    /// A nested transaction must belong to the same app as the notification carrying it.
    static func checkSameApp(nestedBundleID: String?, outerBundleID: String?) throws(VerificationError) {
        guard let outerBundleID, nestedBundleID != outerBundleID else { return }
        throw .wrongApp(
            "the nested JWS is for '\(nestedBundleID ?? "no bundleId")', the notification for '\(outerBundleID)'"
        )
    }
}
