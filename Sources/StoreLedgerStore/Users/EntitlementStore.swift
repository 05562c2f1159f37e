package import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Reads what users hold, through `entitlements_at(t)` (migration 0012), the one definition of "entitled now":
/// the read-model rows linked to a user (by `user_links`), or carrying an appAccountToken the user owns when the
/// purchase has no link of its own, evaluated at the instant the caller asks about. Given an app (the app-facing API
/// of one app in a deployment of several), only that app's purchases: user ids are the app's own, and one app's
/// subscription must not unlock another.
package enum EntitlementStore {
    /// Every subscription and purchase of `user` as of `date` (made in app `app`; nil: in any app), newest expiry first.
    package static func entitlements(
        of user: UserID, at date: Date, app: String? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Entitlement] {
        try await decode(connection.query(entitlementsQuery(of: user, at: date, app: app), logger: logger))
    }

    /// The statement of ``entitlements(of:at:app:on:logger:)``: every key it looks up (a user's links and tokens)
    /// reaches `subscriptions` and `purchases` by index, through `entitlements_at` (tests read its plan).
    package static func entitlementsQuery(of user: UserID, at date: Date, app: String? = nil) -> PostgresQuery {
        let user = user.rawValue
        return
            """
            WITH tokens AS (
                SELECT app_account_token FROM app_account_tokens WHERE user_id = \(user)
            ), keys AS (
                SELECT environment, original_transaction_id FROM user_links WHERE user_id = \(user)
                UNION
                SELECT s.environment, s.original_transaction_id
                FROM tokens t JOIN subscriptions s ON lower(s.app_account_token) = t.app_account_token
                UNION
                SELECT p.environment, coalesce(p.original_transaction_id, p.transaction_id)
                FROM tokens t JOIN purchases p ON lower(p.app_account_token) = t.app_account_token
            ), owned AS (
                -- A purchase linked to someone else is theirs, whatever token it carries. (A key has at most one link:
                -- a per-key primary-key lookup, where NOT EXISTS let the planner hash all of user_links.)
                SELECT k.* FROM keys k
                WHERE coalesce((SELECT l.user_id FROM user_links l WHERE l.environment = k.environment
                                AND l.original_transaction_id = k.original_transaction_id), \(user)) = \(user)
            )
            \(unescaped: selectColumns)
            FROM entitlements_at(\(date)) e
            JOIN owned o ON e.environment = o.environment AND e.original_transaction_id = o.original_transaction_id
            WHERE \(app)::text IS NULL OR e.bundle_id = \(app)
            \(unescaped: groupBy)
            ORDER BY e.expires_at DESC NULLS FIRST, e.purchased_at DESC NULLS LAST, e.kind, e.transaction_id
            """
    }

    /// The row that holds transaction `transactionID` (or original transaction) in `environment` as of `date`, if
    /// projected (and made in app `app`, when given).
    package static func entitlement(
        environment: String, transactionID: String, at date: Date, app: String? = nil, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Entitlement? {
        let rows = try await connection.query(
            """
            \(unescaped: selectColumns)
            FROM entitlements_at(\(date)) e
            WHERE e.environment = \(environment)
              -- By key only (a subscription's renewals are found through their recorded transaction), so each
              -- table is read by index: an OR on subscriptions' unindexed latest_transaction_id scanned it whole.
              AND (e.original_transaction_id IN (\(transactionID), coalesce((SELECT original_transaction_id FROM transactions
                                                 WHERE environment = \(environment) AND transaction_id = \(transactionID) LIMIT 1),
                                                \(transactionID)))
                   OR (e.kind = 'purchase' AND e.transaction_id = \(transactionID)))
              AND (\(app)::text IS NULL OR e.bundle_id = \(app))
            \(unescaped: groupBy)
            ORDER BY e.kind DESC
            LIMIT 1
            """,
            logger: logger
        )
        return try await decode(rows).first
    }

    /// The columns of one row per purchase, its granted entitlements gathered (followed by `FROM entitlements_at(…) e`).
    private static let selectColumns = """
        SELECT e.kind, e.environment, e.original_transaction_id, e.transaction_id, e.product_id, e.product_type, e.status,
               e.status_now, array_remove(array_agg(e.entitlement ORDER BY e.entitlement), NULL), bool_or(e.entitled_now),
               e.reason, e.ends_at, e.purchased_at, e.expires_at, e.grace_period_expires_at, e.revoked_at, e.auto_renew,
               e.ownership, e.app_account_token, e.bundle_id
        """

    /// Every column but the aggregated two.
    private static let groupBy = """
        GROUP BY e.kind, e.environment, e.original_transaction_id, e.transaction_id, e.product_id, e.product_type, e.status,
                 e.status_now, e.reason, e.ends_at, e.purchased_at, e.expires_at, e.grace_period_expires_at, e.revoked_at,
                 e.auto_renew, e.ownership, e.app_account_token, e.bundle_id
        """

    private static func decode(_ rows: PostgresRowSequence) async throws -> [Entitlement] {
        var entitlements: [Entitlement] = []
        for try await row in rows {
            let (kind, environment, original, transaction, product, productType, status, statusNow) =
                try row.decode((String, String, String, String?, String?, String?, String, String).self)
            let columns = row.makeRandomAccess()
            entitlements.append(
                Entitlement(
                    kind: Entitlement.Kind(rawValue: kind) ?? .purchase, environment: environment, originalTransactionID: original,
                    transactionID: transaction, bundleID: try columns[19].decode(String?.self), productID: product, productType: productType,
                    status: status, statusNow: statusNow,
                    entitlements: try columns[8].decode([String].self), entitledNow: try columns[9].decode(Bool.self),
                    reason: try columns[10].decode(String.self), endsAt: try columns[11].decode(Date?.self),
                    purchasedAt: try columns[12].decode(Date?.self), expiresAt: try columns[13].decode(Date?.self),
                    gracePeriodExpiresAt: try columns[14].decode(Date?.self), revokedAt: try columns[15].decode(Date?.self),
                    autoRenew: try columns[16].decode(Bool?.self), ownership: try columns[17].decode(String?.self),
                    appAccountToken: try columns[18].decode(String?.self)
                )
            )
        }
        return entitlements
    }
}
