import Foundation

/// How to reach and authenticate to Apple's App Store Server API.
///
/// Environment keys (the seeds' names): `APPSTORE_ISSUER_ID`, `APPSTORE_KEY_ID`, `APPSTORE_PRIVATE_KEY` (the .p8
/// key, PKCS#8 PEM; `\n` escapes accepted), `APP_BUNDLE_ID` (the first, when several), and optionally
/// `APPSTORE_API_URL` / `APPSTORE_API_SANDBOX_URL` (default Apple's hosts).
package struct AppStoreAPIConfiguration: Sendable {
    /// Apple's production host.
    package static let productionHost = "https://api.storekit.apple.com"
    /// Apple's sandbox host.
    package static let sandboxHost = "https://api.storekit-sandbox.apple.com"

    /// The issuer id of the App Store Connect API key.
    package var issuerID: String
    /// The key id.
    package var keyID: String
    /// The private key, PKCS#8 PEM.
    package var privateKeyPEM: String
    /// The app's bundle id (the token's `bid`).
    package var bundleID: String
    /// The production base URL.
    package var productionURL: String
    /// The sandbox base URL.
    package var sandboxURL: String
    /// How long one request may take.
    package var requestTimeout: Duration
    /// Attempts per call, including the first (retries on 429, 5000001/4290000, 5xx, Apple's "not found, try again"
    /// 4040002/4040004/4040006, timeouts and network errors).
    package var maximumAttempts: Int
    /// The first backoff; doubled per retry, with full jitter; a `Retry-After` is waited for (at least the jittered
    /// backoff) when it is at most `maximumBackoff` away, and a longer one ends the call.
    package var initialBackoff: Duration
    /// The longest wait between attempts.
    package var maximumBackoff: Duration

    /// Creates a configuration.
    package init(
        issuerID: String, keyID: String, privateKeyPEM: String, bundleID: String,
        productionURL: String = AppStoreAPIConfiguration.productionHost, sandboxURL: String = AppStoreAPIConfiguration.sandboxHost,
        requestTimeout: Duration = .seconds(10), maximumAttempts: Int = 4, initialBackoff: Duration = .milliseconds(500),
        maximumBackoff: Duration = .seconds(8)
    ) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.privateKeyPEM = privateKeyPEM
        self.bundleID = bundleID
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.requestTimeout = requestTimeout
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// Reads the configuration from settings values keyed as the README names them (`APPSTORE_KEY_ID`); nil when none
    /// of the credentials is set, an error naming what is missing when only some are.
    package static func fromSettings(_ variables: [String: String]) throws(AppStoreAPIError) -> AppStoreAPIConfiguration? {
        func value(_ key: String) -> String? { variables[key].flatMap { $0.isEmpty ? nil : $0 } }
        let keys = ["APPSTORE_ISSUER_ID", "APPSTORE_KEY_ID", "APPSTORE_PRIVATE_KEY"]
        let present = keys.filter { value($0) != nil }
        if present.isEmpty { return nil }
        let missing = keys.filter { value($0) == nil } + (value("APP_BUNDLE_ID") == nil ? ["APP_BUNDLE_ID"] : [])
        guard missing.isEmpty else {
            throw AppStoreAPIError(
                .configuration, "the App Store Server API needs \(missing.joined(separator: ", ")) (set: \(present.joined(separator: ", ")))")
        }
        let bundle = value("APP_BUNDLE_ID")!.split(separator: ",").lazy.map { $0.trimmingCharacters(in: .whitespaces) }.first { !$0.isEmpty } ?? ""
        return AppStoreAPIConfiguration(
            issuerID: value("APPSTORE_ISSUER_ID")!, keyID: value("APPSTORE_KEY_ID")!,
            privateKeyPEM: value("APPSTORE_PRIVATE_KEY")!.replacingOccurrences(of: "\\n", with: "\n"), bundleID: bundle,
            productionURL: value("APPSTORE_API_URL") ?? productionHost, sandboxURL: value("APPSTORE_API_SANDBOX_URL") ?? sandboxHost
        )
    }

    /// The base URL of `environment`, without a trailing slash.
    package func baseURL(_ environment: AppStoreAPIHost) -> String {
        let url = environment == .production ? productionURL : sandboxURL
        return url.hasSuffix("/") ? String(url.dropLast()) : url
    }
}
