package import Foundation
package import StoreLedgerProcessing
package import StoreLedgerVerification

extension Settings {
    /// The apps whose signed data is accepted: `APPS` (`bundle.id:appAppleId,…`), else `APP_BUNDLE_ID`
    /// (comma-separated for several) with `APP_APPLE_ID` (one app's: refused beside several bundle ids).
    /// `defaultBundleID` applies when none is set.
    package func apps(defaultBundleID: String? = nil) throws(SettingsError) -> [AppIdentity] {
        if let list = string("APPS") {
            var apps: [AppIdentity] = []
            for entry in list.split(separator: ",") {
                let parts = entry.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard let bundle = parts.first, !bundle.isEmpty else {
                    throw SettingsError(.malformed, "APPS entry '\(entry)' has no bundle id", key: "APPS")
                }
                guard parts.count == 2 else {
                    apps.append(AppIdentity(bundleID: bundle))
                    continue
                }
                guard let appleID = Int64(parts[1]) else {
                    throw SettingsError(.malformed, "APPS entry '\(entry)': '\(parts[1])' is not a numeric App Apple ID", key: "APPS")
                }
                apps.append(AppIdentity(bundleID: bundle, appAppleID: appleID))
            }
            return apps
        }
        var appleID: Int64?
        if let text = string("APP_APPLE_ID") {
            guard let value = Int64(text) else {
                throw SettingsError(.malformed, "APP_APPLE_ID=\(text) is not a number", key: "APP_APPLE_ID")
            }
            appleID = value
        }
        guard let bundles = string("APP_BUNDLE_ID") ?? defaultBundleID else {
            throw SettingsError(
                .missing, "APP_BUNDLE_ID is not set: name the app whose notifications this ledger accepts (or APPS=bundle.id:appAppleId,…)",
                key: "APP_BUNDLE_ID")
        }
        let listed = bundles.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !listed.isEmpty else {
            throw SettingsError(.malformed, "APP_BUNDLE_ID=\(bundles) names no bundle id", key: "APP_BUNDLE_ID")
        }
        // One Apple ID given to several apps would accept Sandbox and reject every other app's Production data once
        // it is live (each app has its own appAppleId), after the receiver acknowledged it.
        if let appleID, listed.count > 1 {
            throw SettingsError(
                .malformed,
                "APP_APPLE_ID=\(appleID) names one app, but APP_BUNDLE_ID lists \(listed.count): give each app its own Apple ID "
                    + "with APPS=\(listed.map { "\($0):<appAppleId>" }.joined(separator: ","))",
                key: "APP_APPLE_ID")
        }
        return listed.map { AppIdentity(bundleID: $0, appAppleID: appleID) }
    }

    /// The verifiers: the apps (``apps(defaultBundleID:)``), `APPLE_ENVIRONMENTS` (default Production and Sandbox
    /// when every app has its App Apple ID, else Sandbox only), `APPLE_ROOT_CAS_DER_BASE64` (default Apple Root CA -
    /// G3) with `extraRootsDER` beside them, `ALLOW_XCODE_DATA` (default false; development only). Each payload is
    /// judged by the environment it is signed for, whatever route it arrived on.
    package func verifiers(defaultBundleID: String? = nil, extraRootsDER: [Data] = []) throws(SettingsError) -> LedgerVerifiers {
        let apps = try apps(defaultBundleID: defaultBundleID)
        let allowXcode = try bool("ALLOW_XCODE_DATA", default: false)
        var trust: TrustConfiguration
        do {
            trust = try TrustConfiguration.fromConfigurationValue(string(TrustConfiguration.rootsConfigurationKey))
            if !extraRootsDER.isEmpty {
                trust = try TrustConfiguration(rootCertificatesDER: trust.rootCertificatesDER + extraRootsDER)
            }
        } catch {
            throw malformed(TrustConfiguration.rootsConfigurationKey, error)
        }
        do {
            return try LedgerVerifiers(
                apps: apps, environmentsSetting: string(LedgerVerifiers.environmentsKey), trust: trust, allowXcodeEnvironment: allowXcode
            )
        } catch {
            // The refusal of Xcode data beside Production names ALLOW_XCODE_DATA first; anything else is the list's.
            throw malformed(error.detail.hasPrefix("ALLOW_XCODE_DATA") ? "ALLOW_XCODE_DATA" : LedgerVerifiers.environmentsKey, error)
        }
    }
}
