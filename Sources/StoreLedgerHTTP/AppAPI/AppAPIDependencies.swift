package import Foundation
package import StoreLedgerAppStoreAPI
package import StoreLedgerProcessing
package import StoreLedgerStore

/// What the app-facing routes need: the intake (event log + inline handler + catalog), authentication, purchase
/// intents, the App Store Server API (optional: the routes that look transactions up answer 503 without it) and
/// a clock.
package struct AppAPIDependencies: Sendable {
    /// Signed transactions in, entitlements out.
    package var intake: PurchaseIntake
    /// Checks bearer tokens and API keys.
    package var authenticator: Authenticator
    /// Purchase intents.
    package var intents: PurchaseIntentStore
    /// Looks transactions up at Apple (validate, sync, legacy receipts); nil when not configured (those routes then
    /// answer 503 `app_store_api_not_configured`).
    package var appStore: AppStoreAPIClient?
    /// How long a purchase intent waits (default 24 hours; `PURCHASE_INTENT_TTL_SECONDS`).
    package var intentLifetime: Duration
    /// The time of asking (tests pin it).
    package var now: @Sendable () -> Date
    /// Seed 002's anonymous validate mode (`IAP_VALIDATE_ANONYMOUS`); nil: validate needs credentials.
    package var anonymousValidation: AnonymousValidation?
    /// How long one app request may spend asking Apple, retries included (default ``defaultAppStoreBudget``): the
    /// seeds' clients give up after URLSession's 60 s, and load balancers after 30–60 s.
    package var appStoreBudget: Duration

    /// The default ``appStoreBudget``: 20 s, under a 30 s load balancer's timeout with room for the rest of the request.
    package static let defaultAppStoreBudget: Duration = .seconds(20)

    /// Creates the dependencies.
    package init(
        intake: PurchaseIntake, authenticator: Authenticator, intents: PurchaseIntentStore, appStore: AppStoreAPIClient? = nil,
        intentLifetime: Duration = .seconds(86_400), now: @escaping @Sendable () -> Date = { Date() },
        anonymousValidation: AnonymousValidation? = nil, appStoreBudget: Duration = AppAPIDependencies.defaultAppStoreBudget
    ) {
        self.intake = intake
        self.authenticator = authenticator
        self.intents = intents
        self.appStore = appStore
        self.intentLifetime = intentLifetime
        self.now = now
        self.anonymousValidation = anonymousValidation
        self.appStoreBudget = appStoreBudget
    }
}
