import Foundation
package import Hummingbird
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore

/// Seed 001's contract (bearer JWT of the user): `GET /api/subscription/status` → `{isPremium, subscriptionType,
/// expirationDate}` and `POST /api/subscription/sync` `{transactionId, …}` → `{success, is_premium}`.
package struct SubscriptionController: Sendable {
    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the controller.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// The answer to `GET /api/subscription/status`.
    struct StatusResponse: Encodable {
        var isPremium: Bool
        var subscriptionType: String?
        var expirationDate: Date?
    }

    /// Adds the routes behind user authentication.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        let group = router.group("/api/subscription")
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .user))
        group.get("status") { _, context in try await status(context: context) }
        group.post("sync") { request, context in try await sync(request, context: context) }
    }

    /// `isPremium` now, with the type and expiry of the row that makes the user premium, else of their last
    /// subscription that did: seed 001's backend kept the user's last premium record after it lapsed and answered with
    /// it (`isPremium: false`, its `subscriptionType` and past `expirationDate`). The date is when access ends or ended
    /// (``Entitlement/accessEndsAt``: a grace period's end, a refund's revocation), so that a client applying that
    /// backend's rule (premium while now is before `expirationDate`) agrees with `isPremium` either way. The date is
    /// written as that backend's `res.json` wrote its Mongoose dates, `2026-02-21T00:00:00.000Z`
    /// (``JSONBody/DateStyle/javaScript``).
    func status(context: StoreLedgerRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let summary = try await dependencies.intake.summary(of: user, at: dependencies.now(), logger: context.logger)
        let shown = summary.currentPremium ?? summary.lastPremiumSubscription
        return try JSONBody.response(
            StatusResponse(
                isPremium: summary.isPremium, subscriptionType: shown.flatMap(subscriptionType(of:)), expirationDate: shown?.accessEndsAt),
            dates: .javaScript
        )
    }

    /// The catalog period's plain name (`monthly`, `yearly`, …); for an auto-renewable subscription the catalog gives
    /// no period, seed 001's own rule: `monthly` when the product id says so, else `yearly` (its backend's
    /// `productId.includes('monthly') ? 'monthly' : 'yearly'`), so that an app moved from that backend without a
    /// catalog gets the answers it got before.
    func subscriptionType(of entitlement: Entitlement) -> String? {
        let productID = entitlement.productID
        if let period = dependencies.intake.catalog.period(of: productID.map(ProductID.init)) { return period.plainName }
        guard entitlement.kind == .subscription, let productID else { return nil }
        return productID.contains("monthly") ? "monthly" : "yearly"
    }
}
