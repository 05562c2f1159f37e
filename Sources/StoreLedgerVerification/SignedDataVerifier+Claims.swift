extension SignedDataVerifier {
    /// Checks `bundleId` against the configured apps and, in Production, `appAppleId` too.
    ///
    /// - Parameter checksAppAppleID: Whether this kind of payload carries `appAppleId` (transactions do not).
    func checkApp(bundleID: String?, appAppleID: Int64?, checksAppAppleID: Bool) throws(VerificationError) {
        guard let bundleID else {
            throw .wrongApp("the payload carries no bundleId")
        }
        let candidates = configuration.apps.filter { $0.bundleID == bundleID }
        guard !candidates.isEmpty else {
            let configured = configuration.apps.map(\.bundleID).joined(separator: ", ")
            throw .wrongApp("bundleId '\(bundleID)' is not a configured app (configured: \(configured))")
        }
        guard checksAppAppleID, configuration.environment == .production else {
            return
        }
        guard let appAppleID else {
            throw .wrongApp("the payload for '\(bundleID)' carries no appAppleId, required in Production")
        }
        guard candidates.contains(where: { $0.appAppleID == appAppleID }) else {
            throw .wrongApp("appAppleId \(appAppleID) is not the configured Apple id of '\(bundleID)'")
        }
    }

    /// Checks the payload's environment equals the configured one (local test data was already let through by
    /// ``authenticate(_:environmentOf:)`` only when allowed).
    func checkEnvironment(_ environment: String?, isLocalTestData: Bool) throws(VerificationError) {
        guard !isLocalTestData else { return }
        guard let environment else {
            throw .wrongEnvironment("the payload carries no environment; expected '\(configuration.environment)'")
        }
        guard environment == configuration.environment.rawValue else {
            throw .wrongEnvironment(
                "signed for environment '\(environment)', this verifier accepts '\(configuration.environment)'"
            )
        }
    }

    /// A nested transaction must belong to the same app as the notification carrying it.
    static func checkSameApp(nestedBundleID: String?, outerBundleID: String?) throws(VerificationError) {
        guard let outerBundleID, nestedBundleID != outerBundleID else { return }
        throw .wrongApp(
            "the nested JWS is for '\(nestedBundleID ?? "no bundleId")', the notification for '\(outerBundleID)'"
        )
    }
}
