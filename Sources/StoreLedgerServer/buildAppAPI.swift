package import Configuration
import Foundation
import Logging
import StoreLedgerAppStoreAPI
import StoreLedgerCore
package import StoreLedgerHTTP
package import StoreLedgerProcessing
import StoreLedgerStore

/// Builds the app-facing API from the authentication settings (``Settings/authentication()``, or `authentication`
/// when given: `dev`'s), anonymous validate, `PRODUCT_CATALOG`, `PURCHASE_INTENT_TTL_SECONDS`, `WORKER_MAX_ATTEMPTS`,
/// the App Store Server API credentials and the verifiers `verifiers` makes, narrowed to the API's one app
/// (``Settings/appAPIBundleID(accepted:)``: what users hold is that app's purchases; read only when the API is served). Nil,
/// with a notice, when no way to authenticate callers is configured and anonymous validate could not answer either
/// (it asks Apple, so it needs the App Store Server API credentials): the routes are then not served at all, rather
/// than served open, and a receiver-only `serve` needs no app settings.
package func buildAppAPI(
    reader: ConfigReader, context: ServerContext, verifiers: () throws -> LedgerVerifiers,
    authentication: AuthenticationConfiguration? = nil
) async throws -> AppAPI? {
    let settings = Settings(reader: reader)
    let logger = context.logger
    let authentication = try authentication ?? settings.authentication()
    let anonymousValidation = try settings.anonymousValidation()
    let asksApple = try settings.appStoreAPI() != nil
    guard authentication.isConfigured || (anonymousValidation != nil && asksApple) else {
        logger.notice(
            "app-facing API disabled: set AUTH_JWT_SECRET or AUTH_JWT_PUBLIC_KEY (users) and/or ADMIN_API_KEY (servers), or the App Store Server API credentials (APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY) for seed 002's anonymous validate"
        )
        return nil
    }
    if let anonymousValidation, asksApple {
        logger.notice(
            "anonymous validate enabled: /api/iap/validate answers callers without credentials, linked to no user",
            metadata: [
                "per_client_per_minute": "\(anonymousValidation.limiter.perClient)",
                "total_per_minute": "\(anonymousValidation.limiter.total)",
                "trusted_proxies": "\(anonymousValidation.addresses.trustedProxies.count)",
            ])
        if anonymousValidation.addresses.trustedProxies.isEmpty {
            logger.notice(
                "TRUSTED_PROXIES is empty: the anonymous validate limit counts the peer address, so behind a load balancer or ingress every client shares its allowance; list the proxy's addresses"
            )
        }
    }
    let authenticator: Authenticator
    do {
        authenticator = try await Authenticator(configuration: authentication, apiKeys: APIKeyStore(client: context.client))
    } catch {
        let key = authentication.jwtPublicKeyPEM != nil ? "AUTH_JWT_PUBLIC_KEY" : "AUTH_JWT_SECRET"
        throw SettingsError(.malformed, "authentication configuration: \(error)", key: key)
    }
    let accepted = try verifiers()
    accepted.warnIfProductionIsRefused(logger: logger)
    let app = try settings.appAPIBundleID(accepted: accepted.bundleIDs)
    let ledgerVerifiers: LedgerVerifiers
    do {
        ledgerVerifiers = try accepted.only(app: app)
    } catch {
        throw SettingsError(.malformed, "\(Settings.appAPIBundleIDKey): \(error)", key: Settings.appAPIBundleIDKey)
    }
    let processor = InlineProcessor(
        client: context.client, handler: LedgerHandler(verifiers: ledgerVerifiers, factCache: context.factCache),
        owner: "inline:\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier)",
        retryPolicy: try settings.retryPolicy(), sessions: context.sessions
    )
    let catalog = try settings.productCatalog()
    let appStore = try await settings.appStoreClient(bundleID: app)
    if appStore == nil {
        logger.notice(
            "App Store Server API not configured: validate, sync and legacy receipts answer 503 (set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY)"
        )
    }
    logger.info("app-facing API enabled", metadata: ["app": "\(app)", "catalog_products": "\(catalog.products.count)"])
    return AppAPI(
        dependencies: AppAPIDependencies(
            // With one app accepted every row is its own: no filter, so nothing a one-app ledger answered changes.
            intake: PurchaseIntake(processor: processor, catalog: catalog, app: accepted.bundleIDs.count > 1 ? app : nil),
            authenticator: authenticator,
            intents: PurchaseIntentStore(client: context.client), appStore: appStore, intentLifetime: try settings.purchaseIntentLifetime(),
            anonymousValidation: anonymousValidation
        ))
}
