import Foundation
public import Logging
public import PostgresNIO
public import StoreLedgerCore

extension ReadModelStore {
    /// The stored states of these subscriptions (the columns that describe entitlement: status, entitlement,
    /// product, latest transaction, expiry, renewal, revocation, ownership, token), for detecting what a new
    /// projection changes.
    public static func currentSubscriptions(_ keys: [SubscriptionKey], on connection: PostgresConnection, logger: Logger) async throws -> [SubscriptionKey: SubscriptionState] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT s.environment, s.original_transaction_id, s.status, s.entitled, s.latest_transaction_id, s.product_id,
                   (extract(epoch FROM s.expires_at) * 1000)::float8, s.auto_renew, s.auto_renew_product_id, s.revocation_type,
                   s.ownership, s.app_account_token, (extract(epoch FROM s.last_signed_at) * 1000)::float8
            FROM subscriptions s
            JOIN unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.originalTransactionID.rawValue))::text[]) AS k(environment, id)
              ON s.environment = k.environment AND s.original_transaction_id = k.id
            """,
            logger: logger
        )
        var states: [SubscriptionKey: SubscriptionState] = [:]
        for try await row in rows {
            let c = row.makeRandomAccess()
            guard let status = SubscriptionStatus(rawValue: try c[2].decode(String.self)) else { continue }
            var state = SubscriptionState(
                environment: AppStoreEnvironment(rawValue: try c[0].decode(String.self)),
                originalTransactionID: OriginalTransactionID(try c[1].decode(String.self)), status: status
            )
            state.entitled = try c[3].decode(Bool.self)
            state.latestTransactionID = try c[4].decode(String?.self).map(TransactionID.init)
            state.productID = try c[5].decode(String?.self).map(ProductID.init)
            state.expiresAt = try c[6].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
            state.autoRenew = try c[7].decode(Bool?.self)
            state.autoRenewProductID = try c[8].decode(String?.self).map(ProductID.init)
            state.revocationType = try c[9].decode(String?.self).map { RevocationType(rawValue: $0) }
            state.ownership = try c[10].decode(String?.self).map { OwnershipType(rawValue: $0) }
            state.appAccountToken = try c[11].decode(String?.self).map(AppAccountToken.init)
            state.lastSignedAt = try c[12].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
            states[state.key] = state
        }
        return states
    }

    /// The stored states of these one-time purchases (entitlement, revocation and identity columns).
    public static func currentPurchases(_ keys: [PurchaseKey], on connection: PostgresConnection, logger: Logger) async throws -> [PurchaseKey: PurchaseState] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT p.environment, p.transaction_id, p.entitled, p.revocation_type, p.product_id, p.original_transaction_id, p.app_account_token
            FROM purchases p
            JOIN unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.transactionID.rawValue))::text[]) AS k(environment, id)
              ON p.environment = k.environment AND p.transaction_id = k.id
            """,
            logger: logger
        )
        var states: [PurchaseKey: PurchaseState] = [:]
        for try await (environment, transactionID, entitled, revocationType, productID, originalID, token)
            in rows.decode((String, String, Bool, String?, String?, String?, String?).self)
        {
            var state = PurchaseState(environment: AppStoreEnvironment(rawValue: environment), transactionID: TransactionID(transactionID))
            state.entitled = entitled
            state.revocationType = revocationType.map { RevocationType(rawValue: $0) }
            state.productID = productID.map(ProductID.init)
            state.originalTransactionID = originalID.map(OriginalTransactionID.init)
            state.appAccountToken = token.map(AppAccountToken.init)
            states[state.key] = state
        }
        return states
    }
}
