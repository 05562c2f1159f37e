import ArgumentParser
import Configuration
import Foundation
import Logging
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerVerification
import StoreLedgerStore
import StoreLedgerWorker

/// The process configuration, read from environment variables through swift-configuration.
///
/// Values that are present but malformed are errors naming the key, never silently replaced by
/// a default.
struct Environment: Sendable {
    /// Where settings are read from (the process environment).
    let reader: ConfigReader

    /// Reads the process environment (or `variables`, for tests).
    init(variables: [String: String]? = nil) {
        let provider = variables.map { EnvironmentVariablesProvider(environmentVariables: $0) } ?? EnvironmentVariablesProvider()
        self.reader = ConfigReader(provider: provider)
    }

    /// A string value, or nil when unset or empty.
    func string(_ key: String) -> String? {
        reader.string(forKey: ConfigKey(key.lowercased().split(separator: "_").map(String.init)))
            .flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An integer in `range`, `defaultValue` when unset.
    func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = string(key) else { return defaultValue }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ValidationError("\(key)=\(text) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// `DATABASE_URL`, required.
    func databaseURL() throws -> DatabaseURL {
        guard let text = string("DATABASE_URL") else {
            throw ValidationError("DATABASE_URL is not set (e.g. postgres://user:password@localhost:5432/storeledger); `scripts/dev` starts a local database for you")
        }
        do {
            return try DatabaseURL(text)
        } catch let error as StoreError {
            throw ValidationError(error.detail)
        }
    }

    /// `DATABASE_POOLER`: `none` (default: a direct connection), `session` or `transaction` (what PgBouncer's
    /// `pool_mode` is); see ``DatabasePooler``.
    func databasePooler() throws -> DatabasePooler {
        guard let text = string("DATABASE_POOLER") else { return .direct }
        do {
            return try DatabasePooler(configurationValue: text)
        } catch let error as StoreError {
            throw ValidationError(error.detail)
        }
    }

    /// `DATABASE_LISTEN_URL`: a direct (not transaction-pooled) connection the worker LISTENs on; nil when unset.
    func databaseListenURL() throws -> DatabaseURL? {
        guard let text = string("DATABASE_LISTEN_URL") else { return nil }
        do {
            return try DatabaseURL(text, key: "DATABASE_LISTEN_URL")
        } catch let error as StoreError {
            throw ValidationError(error.detail)
        }
    }

    /// `LOG_LEVEL` (trace, debug, info, notice, warning, error, critical; default info).
    func logLevel() throws -> Logger.Level {
        guard let text = string("LOG_LEVEL") else { return .info }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("LOG_LEVEL=\(text) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    /// `DATABASE_MAX_CONNECTIONS` (default 20).
    func maximumConnections() throws -> Int {
        try int("DATABASE_MAX_CONNECTIONS", default: 20, in: 1...1000)
    }

    /// The receiver's settings: `HOST`, `PORT`, `RECEIVER_MAX_BODY_BYTES`, `RECEIVER_STORE_TIMEOUT_MS`,
    /// `RECEIVER_CONCURRENT_COMMITS` and the listener's timeouts (``httpTimeouts()``).
    func receiver() throws -> ReceiverConfiguration {
        ReceiverConfiguration(
            host: string("HOST") ?? "0.0.0.0",
            port: try int("PORT", default: 8080, in: 0...65535),
            maximumBodySize: try int("RECEIVER_MAX_BODY_BYTES", default: 64 * 1024, in: 1024...(16 << 20)),
            storeTimeout: .milliseconds(try int("RECEIVER_STORE_TIMEOUT_MS", default: 5000, in: 100...60000)),
            concurrentCommits: try int("RECEIVER_CONCURRENT_COMMITS", default: EventLog.defaultConcurrentCommits, in: 1...256),
            timeouts: try httpTimeouts()
        )
    }

    /// The HTTP listeners' timeouts (public and admin port): `HTTP_IDLE_TIMEOUT_SECONDS` (default 75) and
    /// `HTTP_REQUEST_TIMEOUT_SECONDS` (default 15).
    func httpTimeouts() throws -> HTTPTimeouts {
        HTTPTimeouts(
            idle: .seconds(try int("HTTP_IDLE_TIMEOUT_SECONDS", default: 75, in: 1...86_400)),
            request: .seconds(try int("HTTP_REQUEST_TIMEOUT_SECONDS", default: 15, in: 1...3_600))
        )
    }

    /// The worker's settings: `WORKER_CONCURRENCY`, `WORKER_BATCH_SIZE`, `WORKER_LEASE_SECONDS`,
    /// `WORKER_POLL_SECONDS`, `WORKER_MAX_ATTEMPTS`.
    func worker() throws -> WorkerConfiguration {
        WorkerConfiguration(
            concurrency: try int("WORKER_CONCURRENCY", default: 2, in: 1...64),
            batchSize: try int("WORKER_BATCH_SIZE", default: 50, in: 1...1000),
            lease: .seconds(try int("WORKER_LEASE_SECONDS", default: 30, in: 1...3600)),
            pollInterval: .seconds(try int("WORKER_POLL_SECONDS", default: 2, in: 1...300)),
            retryPolicy: RetryPolicy(maximumAttempts: try int("WORKER_MAX_ATTEMPTS", default: 20, in: 1...100))
        )
    }

    /// The apps whose signed data is accepted: `APPS` (`bundle.id:appAppleId,…`), else `APP_BUNDLE_ID`
    /// (comma-separated for several) with `APP_APPLE_ID`. `defaultBundleID` applies when none is set.
    func apps(defaultBundleID: String? = nil) throws -> [AppIdentity] {
        if let list = string("APPS") {
            return try list.split(separator: ",").map { entry in
                let parts = entry.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard let bundle = parts.first, !bundle.isEmpty else { throw ValidationError("APPS entry '\(entry)' has no bundle id") }
                guard parts.count == 2 else { return AppIdentity(bundleID: bundle) }
                guard let appleID = Int64(parts[1]) else { throw ValidationError("APPS entry '\(entry)': '\(parts[1])' is not a numeric App Apple ID") }
                return AppIdentity(bundleID: bundle, appAppleID: appleID)
            }
        }
        let appleID: Int64?
        if let text = string("APP_APPLE_ID") {
            guard let value = Int64(text) else { throw ValidationError("APP_APPLE_ID=\(text) is not a number") }
            appleID = value
        } else {
            appleID = nil
        }
        guard let bundles = string("APP_BUNDLE_ID") ?? defaultBundleID else {
            throw ValidationError("APP_BUNDLE_ID is not set: name the app whose notifications this ledger accepts (or APPS=bundle.id:appAppleId,…)")
        }
        return bundles.split(separator: ",").map { AppIdentity(bundleID: $0.trimmingCharacters(in: .whitespaces), appAppleID: appleID) }
    }

    /// The handler this process projects with, over `verifiers`; sets how many decoded facts the process keeps
    /// for refolds: `FACT_CACHE_SIZE` (default 20,000; 0 keeps none).
    func ledgerHandler(verifiers: LedgerVerifiers) throws -> LedgerHandler {
        FactStore.decodedFactCacheCapacity = try int("FACT_CACHE_SIZE", default: FactStore.defaultDecodedFactCacheCapacity, in: 0...10_000_000)
        return LedgerHandler(verifiers: verifiers)
    }

    /// The verifiers: `APPLE_ENVIRONMENTS` (default Production and Sandbox when every app has its App
    /// Apple ID, else Sandbox only), `APPLE_ROOT_CAS_DER_BASE64` (default Apple Root CA - G3),
    /// `ALLOW_XCODE_DATA` (default false; development only). Each payload is judged by the environment it is
    /// signed for, whatever route it arrived on.
    func verifiers(defaultBundleID: String? = nil, extraRootsDER: [Data] = []) throws -> LedgerVerifiers {
        let apps = try apps(defaultBundleID: defaultBundleID)
        let allowXcode = ["1", "true", "yes"].contains(string("ALLOW_XCODE_DATA")?.lowercased() ?? "")
        do {
            var trust = try TrustConfiguration.fromConfigurationValue(string(TrustConfiguration.rootsConfigurationKey))
            if !extraRootsDER.isEmpty {
                trust = try TrustConfiguration(rootCertificatesDER: trust.rootCertificatesDER + extraRootsDER)
            }
            return try LedgerVerifiers(
                apps: apps, environmentsSetting: string(LedgerVerifiers.environmentsKey), trust: trust, allowXcodeEnvironment: allowXcode
            )
        } catch {
            throw ValidationError("verification configuration: \(error.detail)")
        }
    }

    /// How app-facing callers authenticate: `AUTH_JWT_SECRET`, `AUTH_JWT_PUBLIC_KEY` (PEM; `\n` escapes are
    /// accepted so it fits one line), `AUTH_JWT_ISSUER`, `AUTH_JWT_AUDIENCE`, `ADMIN_API_KEY`.
    func authentication() -> AuthenticationConfiguration {
        AuthenticationConfiguration(
            jwtSecret: string("AUTH_JWT_SECRET"),
            jwtPublicKeyPEM: string("AUTH_JWT_PUBLIC_KEY").map { $0.replacingOccurrences(of: "\\n", with: "\n") },
            jwtIssuer: string("AUTH_JWT_ISSUER"),
            jwtAudience: string("AUTH_JWT_AUDIENCE"),
            adminAPIKey: string("ADMIN_API_KEY")
        )
    }

    /// The product catalog from the JSON file at `PRODUCT_CATALOG` (format: docs/app-api.md), or the empty
    /// catalog (every product grants `premium`, except consumables: nothing) when unset.
    func productCatalog() throws -> ProductCatalog {
        guard let path = string("PRODUCT_CATALOG") else { return .empty }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("PRODUCT_CATALOG=\(path) cannot be read: \(error.localizedDescription)")
        }
        do {
            return try ProductCatalog(json: data)
        } catch {
            throw ValidationError("PRODUCT_CATALOG=\(path): \(error)")
        }
    }

    /// Seed 002's anonymous validate mode: `IAP_VALIDATE_ANONYMOUS` (default false), its limits
    /// `IAP_VALIDATE_ANONYMOUS_PER_MINUTE` (per client address, default 30) and
    /// `IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE` (all anonymous callers, default 1200), and `TRUSTED_PROXIES`
    /// (addresses or CIDRs whose `X-Forwarded-For` names the client). Nil when the mode is off.
    func anonymousValidation() throws -> AnonymousValidation? {
        guard let text = string("IAP_VALIDATE_ANONYMOUS") else { return nil }
        switch text.lowercased() {
        case "1", "true", "yes": break
        case "0", "false", "no": return nil
        default: throw ValidationError("IAP_VALIDATE_ANONYMOUS=\(text) is not true or false")
        }
        let proxies = try (string("TRUSTED_PROXIES") ?? "").split(separator: ",").map { entry in
            guard let range = IPAddressRange(String(entry)) else {
                throw ValidationError("TRUSTED_PROXIES: '\(entry)' is not an IP address or CIDR (e.g. 10.0.0.0/8)")
            }
            return range
        }
        return AnonymousValidation(
            perClientPerMinute: try int("IAP_VALIDATE_ANONYMOUS_PER_MINUTE", default: AnonymousValidation.defaultPerClient, in: 1...100_000),
            totalPerMinute: try int("IAP_VALIDATE_ANONYMOUS_TOTAL_PER_MINUTE", default: AnonymousValidation.defaultTotal, in: 1...1_000_000),
            trustedProxies: proxies
        )
    }

    /// `PURCHASE_INTENT_TTL_SECONDS` (default 86400): how long a purchase intent waits for its transaction.
    func purchaseIntentLifetime() throws -> Duration {
        .seconds(try int("PURCHASE_INTENT_TTL_SECONDS", default: 86_400, in: 60...(90 * 86_400)))
    }

    /// The admin port (`/metrics`, `/healthz`, `/readyz`): `ADMIN_HOST` (default `0.0.0.0`) and `ADMIN_PORT`
    /// (default `defaultPort`; `off` disables it). Nil when disabled.
    func admin(defaultPort: Int) throws -> (host: String, port: Int)? {
        if string("ADMIN_PORT")?.lowercased() == "off" { return nil }
        return (string("ADMIN_HOST") ?? "0.0.0.0", try int("ADMIN_PORT", default: defaultPort, in: 0...65535))
    }

    /// The App Store Server API configuration (`APPSTORE_ISSUER_ID`, `APPSTORE_KEY_ID`, `APPSTORE_PRIVATE_KEY`,
    /// `APP_BUNDLE_ID`, `APPSTORE_API_URL`, `APPSTORE_API_SANDBOX_URL`), nil when no credential is set.
    func appStoreAPI() throws -> AppStoreAPIConfiguration? {
        let keys = ["APPSTORE_ISSUER_ID", "APPSTORE_KEY_ID", "APPSTORE_PRIVATE_KEY", "APP_BUNDLE_ID", "APPSTORE_API_URL", "APPSTORE_API_SANDBOX_URL"]
        var variables: [String: String] = [:]
        for key in keys { variables[key] = string(key) }
        do {
            return try AppStoreAPIConfiguration.fromEnvironment(variables)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The App Store Server API client, or nil when it is not configured.
    func appStoreClient() async throws -> AppStoreAPIClient? {
        guard let configuration = try appStoreAPI() else { return nil }
        do {
            return try await AppStoreAPIClient(configuration: configuration)
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The environments reconciliation asks: those the verifiers accept.
    func reconciliationEnvironments(_ verifiers: LedgerVerifiers) -> [AppStoreAPIEnvironment] {
        verifiers.environments.compactMap { environment in
            switch environment {
            case .production: .production
            case .sandbox: .sandbox
            default: nil
            }
        }
    }

    /// `RECONCILE_INTERVAL_SECONDS`: run the reconciler in each worker this often (unset: not at all).
    func reconcileInterval() throws -> Duration? {
        guard string("RECONCILE_INTERVAL_SECONDS") != nil else { return nil }
        return .seconds(try int("RECONCILE_INTERVAL_SECONDS", default: 900, in: 60...86_400))
    }
}
