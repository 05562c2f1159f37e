import Foundation
package import Logging
package import StoreLedgerCore
package import StoreLedgerVerification

/// The deployment's verification: one ``SignedDataVerifier`` accepting every configured environment, so each payload
/// is judged by the rules of the environment it is signed for (its own `environment`, once its signature is
/// verified), whatever route or API it arrived through.
///
/// Apple sends Sandbox notifications to the Production URL when no Sandbox URL is configured, and Sandbox data
/// carries no `appAppleId`: a route's `EnvironmentHint` is kept for investigators and never changes the verdict.
/// Data signed for an environment the deployment does not accept is rejected as the wrong environment, with the
/// setting that decided it (`APPLE_ENVIRONMENTS`).
package struct LedgerVerifiers: Sendable {
    /// The configuration key listing the accepted environments.
    package static let environmentsKey = "APPLE_ENVIRONMENTS"

    /// The verifier.
    package let verifier: SignedDataVerifier

    /// Wraps a verifier.
    package init(_ verifier: SignedDataVerifier) {
        self.verifier = verifier
    }

    /// The accepted environments (Sandbox, Production or both), in configuration order.
    package var environments: [AppStoreEnvironment] {
        verifier.configuration.environments
    }

    /// What an operator must hear at start-up when Production data would be rejected (nil when it is accepted): a
    /// deployment that left out `APP_APPLE_ID` accepts Sandbox only by default, and every real purchase and
    /// notification would then be refused as the wrong environment.
    package var productionRefusalWarning: String? {
        guard !environments.contains(.production) else { return nil }
        let source = verifier.configuration.environmentsSource ?? Self.listed(environments)
        return "Production data is rejected (\(source)): real purchases and notifications will be refused as the wrong environment; "
            + "for a live app set APP_APPLE_ID (or APPS=bundle.id:appAppleId) and leave \(Self.environmentsKey) unset or list Production"
    }

    /// Logs ``productionRefusalWarning`` as a warning when there is one (every process that verifies says it at start-up).
    package func warnIfProductionIsRefused(logger: Logger) {
        if let warning = productionRefusalWarning { logger.warning("\(warning)") }
    }

    /// Builds the verifier for the given apps, environments and trust.
    ///
    /// - Parameter environmentsSource: How `environments` was configured, quoted in wrong-environment reasons;
    ///   defaults to `APPLE_ENVIRONMENTS=<the list>`.
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` when `allowXcodeEnvironment` comes with Production
    ///   (Xcode data is unsigned: development only).
    package init(
        apps: [AppIdentity],
        environments: [AppStoreEnvironment],
        environmentsSource: String? = nil,
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false
    ) throws(VerificationError) {
        let source = environmentsSource ?? Self.listed(environments)
        // Xcode data has no App Store signature (anyone can make it), and entitlements do not look at environments: in
        // a deployment that takes real money, it would let any client post itself a subscription.
        if allowXcodeEnvironment && environments.contains(.production) {
            throw VerificationError(
                .invalidConfiguration,
                "ALLOW_XCODE_DATA accepts data Xcode signs locally, which anyone can make; it is for development and cannot be "
                    + "combined with accepting Production (\(source)): accept Sandbox only (\(Self.environmentsKey)=Sandbox) or turn it off"
            )
        }
        self.init(
            try SignedDataVerifier(
                configuration: VerifierConfiguration(
                    apps: apps, environments: environments, environmentsSource: source, trust: trust, allowXcodeEnvironment: allowXcodeEnvironment
                )))
    }

    /// Builds the verifier from the `APPLE_ENVIRONMENTS` setting as the processes read it.
    ///
    /// - Parameter environmentsSetting: `APPLE_ENVIRONMENTS` (comma-separated `Production`, `Sandbox`, any case), or nil
    ///   for the default: Production and Sandbox when every app has its App Apple ID, else Sandbox only.
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` naming the setting when it is malformed, when it
    ///   accepts Production for an app without its App Apple ID, or Production with `allowXcodeEnvironment`.
    package init(
        apps: [AppIdentity],
        environmentsSetting: String?,
        trust: TrustConfiguration = .appleRootCAG3,
        allowXcodeEnvironment: Bool = false
    ) throws(VerificationError) {
        let (environments, source) = try Self.environments(setting: environmentsSetting, apps: apps)
        try self.init(
            apps: apps, environments: environments, environmentsSource: source, trust: trust, allowXcodeEnvironment: allowXcodeEnvironment
        )
    }

    /// The environments an `APPLE_ENVIRONMENTS` value (or its absence) accepts, and how to name that choice in reasons.
    package static func environments(
        setting: String?, apps: [AppIdentity]
    ) throws(VerificationError) -> (environments: [AppStoreEnvironment], source: String) {
        let everyAppHasAppleID = apps.allSatisfy { $0.appAppleID != nil }
        guard let setting, !setting.allSatisfy(\.isWhitespace) else {
            if everyAppHasAppleID { return ([.production, .sandbox], "\(environmentsKey) unset: Production,Sandbox") }
            let without = apps.filter { $0.appAppleID == nil }
            let why = without.count == apps.count ? "APP_APPLE_ID is not set" : "app '\(without[0].bundleID)' has no App Apple ID"
            return ([.sandbox], "\(environmentsKey) unset: Sandbox only, as \(why)")
        }
        var environments: [AppStoreEnvironment] = []
        for name in setting.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let environment = AppStoreEnvironment(configurationValue: name),
                environment == .production || environment == .sandbox
            else {
                throw VerificationError(
                    .invalidConfiguration,
                    "\(environmentsKey): '\(name)' is not Production or Sandbox (Xcode and LocalTesting data is accepted with ALLOW_XCODE_DATA=true)"
                )
            }
            if !environments.contains(environment) { environments.append(environment) }
        }
        guard !environments.isEmpty else {
            throw VerificationError(.invalidConfiguration, "\(environmentsKey) names no environment: list Production, Sandbox or both")
        }
        if environments.contains(.production), let app = apps.first(where: { $0.appAppleID == nil }) {
            throw VerificationError(
                .invalidConfiguration,
                "\(environmentsKey) accepts Production, whose data must carry the app's Apple ID, but app '\(app.bundleID)' has none: "
                    + "set APP_APPLE_ID (or APPS=bundle.id:appAppleId), or accept Sandbox only"
            )
        }
        return (environments, listed(environments))
    }

    /// How a setting that lists `environments` is quoted in reasons and warnings: `APPLE_ENVIRONMENTS=Production,Sandbox`.
    private static func listed(_ environments: [AppStoreEnvironment]) -> String {
        "\(environmentsKey)=\(environments.map(\.rawValue).joined(separator: ","))"
    }

    /// The bundle ids of the accepted apps, in configuration order.
    package var bundleIDs: [String] { verifier.configuration.apps.map(\.bundleID) }

    /// The same verification accepting `bundleID`'s data only (itself when that is already the only app): the
    /// app-facing API of one app in a deployment of several, so that another app's transaction posted to it is
    /// refused (a wrong app) instead of linked to this app's user.
    package func only(app bundleID: String) throws(VerificationError) -> LedgerVerifiers {
        var configuration = verifier.configuration
        guard bundleIDs != [bundleID] else { return self }
        configuration.apps = configuration.apps.filter { $0.bundleID == bundleID }
        return LedgerVerifiers(try SignedDataVerifier(configuration: configuration))
    }

    /// Verifies a notification (and its nested JWS) by the rules of the environment it is signed for.
    package func verifyNotification(_ jws: String) async throws(VerificationError) -> VerifiedNotification {
        try await verifier.verifyNotification(jws)
    }

    /// Verifies a standalone transaction by the rules of the environment it is signed for.
    package func verifyTransaction(_ jws: String) async throws(VerificationError) -> VerifiedSignedData {
        try await verifier.verifyTransaction(jws)
    }

    /// Verifies a standalone renewal info by the rules of the environment it is signed for.
    package func verifyRenewalInfo(_ jws: String) async throws(VerificationError) -> VerifiedSignedData {
        try await verifier.verifyRenewalInfo(jws)
    }
}
