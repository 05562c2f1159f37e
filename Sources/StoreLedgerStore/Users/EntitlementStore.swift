import Foundation
public import Logging
public import PostgresNIO
public import StoreLedgerCore

/// Reads what users hold: the read-model rows linked to a user (by `user_links`), or carrying an
/// appAccountToken the user owns when the purchase has no link of its own.
public enum EntitlementStore {
    /// Every subscription and purchase of `user`, newest expiry first.
    public static func entitlements(of user: UserID, on connection: PostgresConnection, logger: Logger) async throws -> [Entitlement] {
        var bindings = PostgresBindings()
        bindings.append(user.rawValue)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: """
            WITH tokens AS (
                SELECT app_account_token FROM app_account_tokens WHERE user_id = $1
            ), keys AS (
                SELECT environment, original_transaction_id FROM user_links WHERE user_id = $1
                UNION
                SELECT s.environment, s.original_transaction_id
                FROM tokens t JOIN subscriptions s ON lower(s.app_account_token) = t.app_account_token
                UNION
                SELECT p.environment, coalesce(p.original_transaction_id, p.transaction_id)
                FROM tokens t JOIN purchases p ON lower(p.app_account_token) = t.app_account_token
            ), owned AS (
                -- A purchase linked to someone else is theirs, whatever token it carries.
                SELECT k.* FROM keys k
                WHERE NOT EXISTS (SELECT 1 FROM user_links l WHERE l.environment = k.environment
                                  AND l.original_transaction_id = k.original_transaction_id AND l.user_id <> $1)
            )
            \(selectList)
            JOIN owned o ON r.environment = o.environment AND r.original_transaction_id = o.original_transaction_id
            ORDER BY r.expires_at DESC NULLS FIRST, r.purchased_at DESC NULLS LAST
            """, binds: bindings),
            logger: logger
        )
        return try await decode(rows)
    }

    /// The row that holds transaction `transactionID` (or original transaction) in `environment`, if projected.
    public static func entitlement(
        environment: String, transactionID: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Entitlement? {
        var bindings = PostgresBindings()
        bindings.append(environment)
        bindings.append(transactionID)
        let rows = try await connection.query(
            PostgresQuery(unsafeSQL: """
            \(selectList)
            WHERE r.environment = $1
              AND (r.original_transaction_id = $2 OR r.transaction_id = $2
                   OR r.original_transaction_id = (SELECT original_transaction_id FROM transactions
                                                   WHERE environment = $1 AND transaction_id = $2 LIMIT 1))
            ORDER BY r.kind DESC
            LIMIT 1
            """, binds: bindings),
            logger: logger
        )
        return try await decode(rows).first
    }

    /// Both read-model tables in one shape, aliased `r`.
    private static let selectList = """
        SELECT r.kind, r.environment, r.original_transaction_id, r.transaction_id, r.product_id, r.product_type, r.status,
               r.entitled, r.purchased_at, r.expires_at, r.grace_period_expires_at, r.revoked_at, r.auto_renew, r.ownership,
               r.app_account_token
        FROM (
            SELECT 'subscription' AS kind, environment, original_transaction_id, latest_transaction_id AS transaction_id,
                   product_id, NULL::text AS product_type, status, entitled, purchased_at, expires_at, grace_period_expires_at,
                   revoked_at, auto_renew, ownership, app_account_token
            FROM subscriptions
            UNION ALL
            SELECT 'purchase', environment, coalesce(original_transaction_id, transaction_id), transaction_id,
                   product_id, product_type,
                   CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN entitled THEN 'active' ELSE 'expired' END,
                   entitled, purchased_at, expires_at, NULL::timestamptz, revoked_at, NULL::boolean, ownership, app_account_token
            FROM purchases
        ) r
        """

    private static func decode(_ rows: PostgresRowSequence) async throws -> [Entitlement] {
        var entitlements: [Entitlement] = []
        for try await row in rows {
            let (kind, environment, original, transaction, product, productType, status, entitled) =
                try row.decode((String, String, String, String?, String?, String?, String, Bool).self)
            let columns = row.makeRandomAccess()
            entitlements.append(
                Entitlement(
                    kind: Entitlement.Kind(rawValue: kind) ?? .purchase, environment: environment, originalTransactionID: original,
                    transactionID: transaction, productID: product, productType: productType, status: status, entitled: entitled,
                    purchasedAt: try columns[8].decode(Date?.self), expiresAt: try columns[9].decode(Date?.self),
                    gracePeriodExpiresAt: try columns[10].decode(Date?.self), revokedAt: try columns[11].decode(Date?.self),
                    autoRenew: try columns[12].decode(Bool?.self), ownership: try columns[13].decode(String?.self),
                    appAccountToken: try columns[14].decode(String?.self)
                )
            )
        }
        return entitlements
    }
}
