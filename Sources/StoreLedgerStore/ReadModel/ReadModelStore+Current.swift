import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

extension ReadModelStore {
    /// The stored states of these subscriptions (the columns that describe entitlement: status, entitlement,
    /// product, latest transaction, expiry, renewal, revocation, ownership, token), for detecting what a new
    /// projection changes — or nil, in the same round trip, when no webhook endpoint is active (nothing to detect).
    package static func currentSubscriptionsIfWebhooksActive(
        _ keys: [SubscriptionKey], on connection: PostgresConnection, logger: Logger
    ) async throws -> [SubscriptionKey: SubscriptionState]? {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH hooks AS (SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE active) AS active)
            SELECT hooks.active, s.environment, s.original_transaction_id, s.status, s.entitled, s.latest_transaction_id,
                   s.product_id, (extract(epoch FROM s.expires_at) * 1000)::float8, s.auto_renew, s.auto_renew_product_id,
                   s.revocation_type, s.ownership, s.app_account_token, (extract(epoch FROM s.last_signed_at) * 1000)::float8
            FROM hooks LEFT JOIN (
                subscriptions s
                JOIN unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.originalTransactionID.rawValue))::text[]) AS k(environment, id)
                  ON s.environment = k.environment AND s.original_transaction_id = k.id
            ) ON hooks.active
            """,
            logger: logger
        )
        var active = false
        var states: [SubscriptionKey: SubscriptionState] = [:]
        for try await row in rows {
            let c = row.makeRandomAccess()
            active = try c[0].decode(Bool.self)
            guard active, let environment = try c[1].decode(String?.self), let original = try c[2].decode(String?.self),
                let status = SubscriptionStatus(rawValue: try c[3].decode(String.self))
            else { continue }
            var state = SubscriptionState(
                environment: AppStoreEnvironment(rawValue: environment), originalTransactionID: OriginalTransactionID(original), status: status
            )
            state.entitled = try c[4].decode(Bool.self)
            state.latestTransactionID = try c[5].decode(String?.self).map(TransactionID.init)
            state.productID = try c[6].decode(String?.self).map(ProductID.init)
            state.expiresAt = try c[7].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
            state.autoRenew = try c[8].decode(Bool?.self)
            state.autoRenewProductID = try c[9].decode(String?.self).map(ProductID.init)
            state.revocationType = try c[10].decode(String?.self).map { RevocationType(rawValue: $0) }
            state.ownership = try c[11].decode(String?.self).map { OwnershipType(rawValue: $0) }
            state.appAccountToken = try c[12].decode(String?.self).map(AppAccountToken.init)
            state.lastSignedAt = try c[13].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
            states[state.key] = state
        }
        return active ? states : nil
    }

    /// The stored states of these one-time purchases (entitlement, revocation and identity columns), or nil when no
    /// webhook endpoint is active.
    package static func currentPurchasesIfWebhooksActive(
        _ keys: [PurchaseKey], on connection: PostgresConnection, logger: Logger
    ) async throws -> [PurchaseKey: PurchaseState]? {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH hooks AS (SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE active) AS active)
            SELECT hooks.active, p.environment, p.transaction_id, p.entitled, p.revocation_type, p.product_id,
                   p.original_transaction_id, p.app_account_token
            FROM hooks LEFT JOIN (
                purchases p
                JOIN unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.transactionID.rawValue))::text[]) AS k(environment, id)
                  ON p.environment = k.environment AND p.transaction_id = k.id
            ) ON hooks.active
            """,
            logger: logger
        )
        var active = false
        var states: [PurchaseKey: PurchaseState] = [:]
        for try await (hooks, environment, transactionID, entitled, revocationType, productID, originalID, token)
            in rows.decode((Bool, String?, String?, Bool?, String?, String?, String?, String?).self)
        {
            active = hooks
            guard hooks, let environment, let transactionID else { continue }
            var state = PurchaseState(environment: AppStoreEnvironment(rawValue: environment), transactionID: TransactionID(transactionID))
            state.entitled = entitled ?? false
            state.revocationType = revocationType.map { RevocationType(rawValue: $0) }
            state.productID = productID.map(ProductID.init)
            state.originalTransactionID = originalID.map(OriginalTransactionID.init)
            state.appAccountToken = token.map(AppAccountToken.init)
            states[state.key] = state
        }
        return active ? states : nil
    }
}
