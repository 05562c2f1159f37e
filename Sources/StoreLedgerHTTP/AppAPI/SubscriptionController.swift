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

    func status(context: StoreLedgerRequestContext) async throws -> Response {
        let user = try context.requireUser()
        let summary = try await dependencies.intake.summary(of: user, at: dependencies.now(), logger: context.logger)
        let current = summary.currentPremium
        let period = dependencies.intake.catalog.period(of: current?.productID.map(ProductID.init))
        return try JSONBody.response(
            StatusResponse(isPremium: summary.isPremium, subscriptionType: period?.plainName, expirationDate: current?.expiresAt ?? current?.endsAt)
        )
    }
}
