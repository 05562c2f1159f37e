import Foundation
package import StoreLedgerAppStoreAPI
package import StoreLedgerCore
package import StoreLedgerHTTP
import StoreLedgerVerification

extension Settings {
    /// How app-facing callers authenticate: `AUTH_JWT_SECRET`, `AUTH_JWT_PUBLIC_KEY` (PEM; `\n` escapes are
    /// accepted so it fits one line), `AUTH_JWT_ISSUER`, `AUTH_JWT_AUDIENCE`, `AUTH_JWT_USER_CLAIM` (default `sub`;
    /// never another registered claim, which names no user: `iss` or `aud` would make every user of an issuer one),
    /// `ADMIN_API_KEY`.
    package func authentication() throws(SettingsError) -> AuthenticationConfiguration {
        let userClaim = (string("AUTH_JWT_USER_CLAIM") ?? "sub").trimmingCharacters(in: .whitespaces)
        guard !userClaim.isEmpty, !["iss", "aud", "exp", "nbf", "iat", "jti"].contains(userClaim) else {
            throw SettingsError(
                .malformed, "AUTH_JWT_USER_CLAIM=\(userClaim) names no user: use sub, or the claim your sign-in server puts the user id in",
                key: "AUTH_JWT_USER_CLAIM")
        }
        return AuthenticationConfiguration(
            jwtSecret: string("AUTH_JWT_SECRET"),
            jwtPublicKeyPEM: string("AUTH_JWT_PUBLIC_KEY").map { $0.replacingOccurrences(of: "\\n", with: "\n") },
            jwtIssuer: string("AUTH_JWT_ISSUER"),
            jwtAudience: string("AUTH_JWT_AUDIENCE"),
            jwtUserClaim: userClaim,
            adminAPIKey: string("ADMIN_API_KEY")
        )
    }

    /// The product catalog from the JSON file at `PRODUCT_CATALOG` (format: docs/app-api.md), or the empty
    /// catalog (every product grants `premium`, except consumables: nothing) when unset.
    package func productCatalog() throws(SettingsError) -> ProductCatalog {
        guard let path = string("PRODUCT_CATALOG") else { return .empty }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SettingsError(.malformed, "PRODUCT_CATALOG=\(path) cannot be read: \(error.localizedDescription)", key: "PRODUCT_CATALOG")
        }
        do {
            return try ProductCatalog(json: data)
        } catch {
            throw SettingsError(.malformed, "PRODUCT_CATALOG=\(path): \(error)", key: "PRODUCT_CATALOG")
        }
    }

    /// Seed 002's anonymous validate mode: `IAP_VALIDATE_ANONYMOUS` (default true: seed 002's app sends no
    /// credentials, and its contract is the validate route without them), its limits
    /// `IAP_VALIDATE_ANONYMOUS_PER_MINUTE` (per client address, default 30) and
    /// `IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE` (all anonymous callers, default 1200), and `TRUSTED_PROXIES`
    /// (addresses or CIDRs whose `X-Forwarded-For` names the client). Nil when the mode is off.
    package func anonymousValidation() throws(SettingsError) -> AnonymousValidation? {
        guard try bool("IAP_VALIDATE_ANONYMOUS", default: true) else { return nil }
        return AnonymousValidation(
            perClientPerMinute: try int("IAP_VALIDATE_ANONYMOUS_PER_MINUTE", default: AnonymousValidation.defaultPerClient, in: 1...100_000),
            totalPerMinute: try int("IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE", default: AnonymousValidation.defaultTotal, in: 1...1_000_000),
            trustedProxies: try trustedProxies()
        )
    }

    /// `TRUSTED_PROXIES`: comma-separated addresses or CIDRs of the load balancers whose `X-Forwarded-For` names the
    /// client (the anonymous validate limit, the address a notification's row records); empty when unset.
    package func trustedProxies() throws(SettingsError) -> [IPAddressRange] {
        var proxies: [IPAddressRange] = []
        for entry in (string("TRUSTED_PROXIES") ?? "").split(separator: ",") {
            guard let range = IPAddressRange(String(entry)) else {
                throw SettingsError(.malformed, "TRUSTED_PROXIES: '\(entry)' is not an IP address or CIDR (e.g. 10.0.0.0/8)", key: "TRUSTED_PROXIES")
            }
            proxies.append(range)
        }
        return proxies
    }

    /// `PURCHASE_INTENT_TTL_SECONDS` (default 86400): how long a purchase intent waits for its transaction.
    package func purchaseIntentLifetime() throws(SettingsError) -> Duration {
        .seconds(try int("PURCHASE_INTENT_TTL_SECONDS", default: 86_400, in: 60...(90 * 86_400)))
    }

    /// The App Store Server API configuration (`APPSTORE_ISSUER_ID`, `APPSTORE_KEY_ID`, `APPSTORE_PRIVATE_KEY`,
    /// `APP_BUNDLE_ID` or else the first app of `APPS`, `APPSTORE_API_URL`, `APPSTORE_API_SANDBOX_URL`), nil when no
    /// credential is set.
    package func appStoreAPI() throws(SettingsError) -> AppStoreAPIConfiguration? {
        let keys = ["APPSTORE_ISSUER_ID", "APPSTORE_KEY_ID", "APPSTORE_PRIVATE_KEY", "APP_BUNDLE_ID", "APPSTORE_API_URL", "APPSTORE_API_SANDBOX_URL"]
        var variables: [String: String] = [:]
        for key in keys { variables[key] = string(key) }
        // Apps given their Apple IDs with APPS have no APP_BUNDLE_ID: the API's tokens name the first of them.
        if variables["APP_BUNDLE_ID"] == nil, string("APPS") != nil {
            variables["APP_BUNDLE_ID"] = try apps().first?.bundleID
        }
        do {
            return try AppStoreAPIConfiguration.fromSettings(variables)
        } catch {
            let missing = keys.first { error.detail.contains($0) } ?? "APPSTORE_ISSUER_ID"
            throw SettingsError(.missing, error.detail, key: missing)
        }
    }

    /// One App Store Server API client per configured app (``apps(defaultBundleID:)``), in their order: the same key,
    /// each app's bundle id in its tokens, since Apple answers for the app the token names. Empty when the API is not
    /// configured. What reaches out for every app (the reconciler) uses these; lookups for the app-facing API use its
    /// app's (``appStoreClient(bundleID:)``).
    package func appStoreClients() async throws(SettingsError) -> [AppStoreAPIClient] {
        guard let first = try appStoreAPI() else { return [] }
        // The apps this deployment accepts (APPS when set, else APP_BUNDLE_ID): an app it does not accept is not asked.
        var bundles: [String] = []
        for app in try apps() where !bundles.contains(app.bundleID) { bundles.append(app.bundleID) }
        if bundles.isEmpty { bundles = [first.bundleID] }
        var clients: [AppStoreAPIClient] = []
        for bundle in bundles {
            var configuration = first
            configuration.bundleID = bundle
            clients.append(try await Self.client(configuration))
        }
        return clients
    }

    /// The App Store Server API client, or nil when it is not configured; its tokens name `bundleID` when given, else
    /// the first app.
    package func appStoreClient(bundleID: String? = nil) async throws(SettingsError) -> AppStoreAPIClient? {
        guard var configuration = try appStoreAPI() else { return nil }
        if let bundleID { configuration.bundleID = bundleID }
        return try await Self.client(configuration)
    }

    /// The app whose users the app-facing API answers for, among `accepted` (the verifiers' bundle ids):
    /// `APP_API_BUNDLE_ID`, or the only accepted app. Several apps without it is an error: user ids are each app's own,
    /// and an answer across apps would let one app's subscription unlock another's users.
    package func appAPIBundleID(accepted: [String]) throws(SettingsError) -> String {
        if let bundle = string(Self.appAPIBundleIDKey)?.trimmingCharacters(in: .whitespaces), !bundle.isEmpty {
            guard accepted.contains(bundle) else {
                throw SettingsError(
                    .malformed,
                    "\(Self.appAPIBundleIDKey)=\(bundle) is not an accepted app (\(accepted.joined(separator: ", "))): name one of them",
                    key: Self.appAPIBundleIDKey)
            }
            return bundle
        }
        guard accepted.count == 1, let only = accepted.first else {
            throw SettingsError(
                .missing,
                "several apps are accepted (\(accepted.joined(separator: ", "))): set \(Self.appAPIBundleIDKey) to the app whose users "
                    + "this process's app-facing API answers for (run one API process per app), or leave the API off",
                key: Self.appAPIBundleIDKey)
        }
        return only
    }

    /// The setting naming the app-facing API's app.
    package static let appAPIBundleIDKey = "APP_API_BUNDLE_ID"

    /// A client of `configuration`; a private key that does not parse is `APPSTORE_PRIVATE_KEY`'s error.
    private static func client(_ configuration: AppStoreAPIConfiguration) async throws(SettingsError) -> AppStoreAPIClient {
        do {
            return try await AppStoreAPIClient(configuration: configuration)
        } catch {
            throw SettingsError(.malformed, error.description, key: "APPSTORE_PRIVATE_KEY")
        }
    }
}
