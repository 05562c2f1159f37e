import Foundation
package import Hummingbird
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore

/// `GET /v1/users/{id}/entitlements` (API key): every subscription and purchase of a user, with its status as
/// of now, for the host app's servers: the rows of `entitlements_at(now)` for the user, one per purchase.
package struct EntitlementsController: Sendable {
    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the controller.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// One row of the answer.
    struct Item: Encodable {
        var kind: String
        var product_id: String?
        var product_type: String?
        var status: String
        var entitled: Bool
        var reason: String
        var ends_at: Date?
        var expires_at: Date?
        var grace_period_expires_at: Date?
        var purchased_at: Date?
        var revoked_at: Date?
        var auto_renew: Bool?
        var ownership: String?
        var environment: String
        var bundle_id: String?
        var original_transaction_id: String
        var transaction_id: String?
        var entitlements: [String]

        /// Every key is written, an absent value as `null` (as docs/app-api.md and openapi.json describe it): a host
        /// reading `row["ends_at"]` finds the key. The synthesized encoding would leave absent values out.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            try container.encode(product_id, forKey: .product_id)
            try container.encode(product_type, forKey: .product_type)
            try container.encode(status, forKey: .status)
            try container.encode(entitled, forKey: .entitled)
            try container.encode(reason, forKey: .reason)
            try container.encode(ends_at, forKey: .ends_at)
            try container.encode(expires_at, forKey: .expires_at)
            try container.encode(grace_period_expires_at, forKey: .grace_period_expires_at)
            try container.encode(purchased_at, forKey: .purchased_at)
            try container.encode(revoked_at, forKey: .revoked_at)
            try container.encode(auto_renew, forKey: .auto_renew)
            try container.encode(ownership, forKey: .ownership)
            try container.encode(environment, forKey: .environment)
            try container.encode(bundle_id, forKey: .bundle_id)
            try container.encode(original_transaction_id, forKey: .original_transaction_id)
            try container.encode(transaction_id, forKey: .transaction_id)
            try container.encode(entitlements, forKey: .entitlements)
        }

        private enum CodingKeys: String, CodingKey {
            case kind, product_id, product_type, status, entitled, reason, ends_at, expires_at, grace_period_expires_at, purchased_at,
                revoked_at, auto_renew, ownership, environment, bundle_id, original_transaction_id, transaction_id, entitlements
        }
    }

    /// The answer.
    struct Response: Encodable {
        var user_id: String
        var is_premium: Bool
        var entitlements: [Item]
    }

    /// Adds the route behind API-key authentication.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        router.group("/v1/users")
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .service))
            .get(":id/entitlements") { _, context in try await entitlements(context: context) }
    }

    func entitlements(context: StoreLedgerRequestContext) async throws -> Hummingbird.Response {
        guard let id = context.decodedParameter("id"), !id.isEmpty else {
            throw APIError(.badRequest, code: "invalid_request", message: "the user id in the path is not valid percent-encoding")
        }
        let now = dependencies.now()
        let summary = try await dependencies.intake.summary(of: UserID(id), at: now, logger: context.logger)
        let items = summary.entitlements.map { row in
            Item(
                kind: row.kind.rawValue, product_id: row.productID, product_type: row.productType, status: row.statusNow,
                entitled: row.entitledNow, reason: row.reason, ends_at: row.endsAt, expires_at: row.expiresAt,
                grace_period_expires_at: row.gracePeriodExpiresAt, purchased_at: row.purchasedAt, revoked_at: row.revokedAt,
                auto_renew: row.autoRenew, ownership: row.ownership, environment: row.environment, bundle_id: row.bundleID,
                original_transaction_id: row.originalTransactionID, transaction_id: row.transactionID, entitlements: row.entitlements
            )
        }
        return try JSONBody.response(Response(user_id: id, is_premium: summary.isPremium, entitlements: items))
    }
}
