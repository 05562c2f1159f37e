package import Hummingbird

/// The app-facing API: the seeds' contracts and StoreLedger's own versioned routes, all answering JSON and every
/// error as `{error, code}`. Described in `docs/openapi.json`.
package struct AppAPI: Sendable {
    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the API.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// Adds every app-facing route to `router`.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        AppStorePaymentsController(dependencies: dependencies).addRoutes(to: router)
        SubscriptionController(dependencies: dependencies).addRoutes(to: router)
        EntitlementsController(dependencies: dependencies).addRoutes(to: router)
        PurchaseIntentsController(dependencies: dependencies).addRoutes(to: router)
        IAPValidationController(dependencies: dependencies).addRoutes(to: router)
    }
}
