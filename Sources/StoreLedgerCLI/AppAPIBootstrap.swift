import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerWorker

/// Builds the app-facing API from the environment, shared by `serve` and `dev`.
enum AppAPIBootstrap {
    /// The API, or nil (with a notice) when no way to authenticate callers is configured: the routes are then
    /// not served at all, rather than served open.
    static func make(
        _ environment: Environment, client: PostgresClient, verifiers: @autoclosure () throws -> LedgerVerifiers,
        authentication: AuthenticationConfiguration? = nil, logger: Logger
    ) async throws -> AppAPI? {
        let authentication = authentication ?? environment.authentication()
        let anonymousValidation = try environment.anonymousValidation()
        guard authentication.isConfigured || anonymousValidation != nil else {
            logger.notice("app-facing API disabled: set AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY (users) and/or ADMIN_API_KEY (servers)")
            return nil
        }
        if let anonymousValidation {
            logger.notice(
                "anonymous validate enabled: /api/iap/validate answers callers without credentials, linked to no user",
                metadata: [
                    "per_client_per_minute": "\(anonymousValidation.limiter.perClient)",
                    "total_per_minute": "\(anonymousValidation.limiter.total)",
                    "trusted_proxies": "\(anonymousValidation.addresses.trustedProxies.count)",
                ])
        }
        let authenticator: Authenticator
        do {
            authenticator = try await Authenticator(configuration: authentication, apiKeys: APIKeyStore(client: client))
        } catch {
            throw ValidationError("authentication configuration: \(error)")
        }
        let processor = InlineProcessor(
            client: client, handler: try environment.ledgerHandler(verifiers: try verifiers()),
            owner: "inline:\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)",
            retryPolicy: try environment.worker().retryPolicy
        )
        let catalog = try environment.productCatalog()
        let appStore = try await environment.appStoreClient()
        if appStore == nil {
            logger.notice("App Store Server API not configured: validate, sync and legacy receipts answer 503 (set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY)")
        }
        logger.info("app-facing API enabled", metadata: ["catalog_products": "\(catalog.products.count)"])
        return AppAPI(dependencies: AppAPIDependencies(
            intake: PurchaseIntake(processor: processor, catalog: catalog), authenticator: authenticator,
            intents: PurchaseIntentStore(client: client), appStore: appStore, intentLifetime: try environment.purchaseIntentLifetime(),
            anonymousValidation: anonymousValidation
        ))
    }
}
