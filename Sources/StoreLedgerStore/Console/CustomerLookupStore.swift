import Foundation
package import Logging
package import PostgresNIO

/// The console's customer lookup: the purchases a user id, appAccountToken, originalTransactionId or transactionId
/// names, their state now (`entitlements_now`) and their timelines (`notifications`, `transactions`). Every statement
/// is served by an index on the key it looks for, and bounded.
package struct CustomerLookupStore: Sendable {
    /// The longest key a search looks up (user ids, tokens and transaction ids are far shorter).
    package static let maximumKeyLength = 256

    /// The environments Apple signs for; lookups that do not know the environment try each, so the
    /// `(environment, …)` indexes serve them.
    package static let environments = ["Production", "Sandbox", "Xcode", "LocalTesting"]
    /// At most this many purchases per lookup (one page of ``purchases(matching:limit:offset:logger:)``).
    package static let purchaseLimit = 100
    /// At most this many timeline entries per purchase.
    package static let timelineLimit = 1_000

    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// The purchases `key` names as a user id (their owner now, or an earlier one: `user_link_history`), an
    /// appAccountToken (any case), an originalTransactionId or a transactionId, with their state now; empty when it
    /// names none. Sorted by environment, kind (subscriptions
    /// first), purchase date and original transaction id; `limit` of them from `offset` in that order, with how many
    /// there are in all (a token shared by thousands of subscriptions is read a page at a time). Given `app`, only the
    /// purchases made in that app (a ledger of several apps: each app's user ids are its own).
    package func purchases(
        matching key: String, app: String? = nil, limit: Int = purchaseLimit, offset: Int = 0, logger: Logger
    ) async throws -> CustomerPurchasePage {
        let key = key.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty, key.count <= Self.maximumKeyLength else { return CustomerPurchasePage(purchases: [], total: 0) }
        let limit = max(0, min(limit, Self.purchaseLimit))
        let offset = max(0, offset)
        let environments = Self.environments
        let rows = try await client.rows(
            """
            WITH keys AS (
                -- Each branch says what it knows of the row it found (is it a subscription, its purchase date); the
                -- three that only know a key (user links, transactions, link history) leave them NULL for `sorted`.
                SELECT environment, original_transaction_id, 1 AS rank, NULL::boolean AS is_subscription, NULL::timestamptz AS purchased_at
                FROM user_links WHERE user_id = \(key)
                UNION ALL
                SELECT s.environment, s.original_transaction_id, 1, true, s.purchased_at
                FROM app_account_tokens t
                JOIN subscriptions s ON lower(s.app_account_token) = t.app_account_token AND s.app_account_token IS NOT NULL
                WHERE t.user_id = \(key)
                UNION ALL
                SELECT p.environment, coalesce(p.original_transaction_id, p.transaction_id), 1, false, p.purchased_at
                FROM app_account_tokens t
                JOIN purchases p ON lower(p.app_account_token) = t.app_account_token AND p.app_account_token IS NOT NULL
                WHERE t.user_id = \(key)
                UNION ALL
                SELECT environment, original_transaction_id, 2, true, purchased_at
                FROM subscriptions WHERE lower(app_account_token) = lower(\(key)) AND app_account_token IS NOT NULL
                UNION ALL
                SELECT environment, coalesce(original_transaction_id, transaction_id), 2, false, purchased_at
                FROM purchases WHERE lower(app_account_token) = lower(\(key)) AND app_account_token IS NOT NULL
                UNION ALL
                SELECT environment, original_transaction_id, 3, true, purchased_at
                FROM subscriptions WHERE environment = ANY(\(environments)) AND original_transaction_id = \(key)
                UNION ALL
                SELECT environment, coalesce(original_transaction_id, transaction_id), 3, false, purchased_at
                FROM purchases WHERE environment = ANY(\(environments)) AND coalesce(original_transaction_id, transaction_id) = \(key)
                UNION ALL
                SELECT environment, original_transaction_id, 4, NULL, NULL
                FROM transactions
                WHERE environment = ANY(\(environments)) AND transaction_id = \(key) AND original_transaction_id IS NOT NULL
                UNION ALL
                -- Purchases the user held once and that moved to another account (restored or synced there): "why did
                -- this user lose premium?" finds them by the user's id, their current owner beside them.
                SELECT environment, original_transaction_id, 5, NULL, NULL
                FROM user_link_history WHERE to_user_id = \(key)
            ), matched AS (
                -- One row per key found (hashed, not sorted: a token shared by 100,000 subscriptions), with the
                -- best way it was found (user id, then appAccountToken, originalTransactionId, transactionId, an earlier owner's id).
                SELECT environment, original_transaction_id, min(rank) AS rank, bool_or(is_subscription) AS is_subscription,
                       min(purchased_at) AS purchased_at
                FROM keys
                GROUP BY environment, original_transaction_id
            ), sorted AS (
                -- Only the keys a branch could not describe are looked up; a key naming no stored row yet is neither
                -- listed nor counted.
                SELECT environment, original_transaction_id, rank, is_subscription, purchased_at
                FROM matched WHERE is_subscription IS NOT NULL
                UNION ALL
                SELECT m.environment, m.original_transaction_id, m.rank, x.is_subscription, x.purchased_at
                FROM matched m
                CROSS JOIN LATERAL (
                    SELECT true AS is_subscription, s.purchased_at FROM subscriptions s
                    WHERE s.environment = m.environment AND s.original_transaction_id = m.original_transaction_id
                    UNION ALL
                    SELECT false, p.purchased_at FROM purchases p
                    WHERE p.environment = m.environment AND coalesce(p.original_transaction_id, p.transaction_id) = m.original_transaction_id
                    LIMIT 1
                ) x
                WHERE m.is_subscription IS NULL
            ), in_app AS (
                -- Each key's app by its row's primary key, only when one app is asked for.
                SELECT * FROM sorted k
                WHERE \(app)::text IS NULL
                   OR EXISTS (SELECT 1 FROM subscriptions s WHERE s.environment = k.environment
                              AND s.original_transaction_id = k.original_transaction_id AND s.bundle_id = \(app))
                   OR EXISTS (SELECT 1 FROM purchases p WHERE p.environment = k.environment
                              AND coalesce(p.original_transaction_id, p.transaction_id) = k.original_transaction_id AND p.bundle_id = \(app))
            ), found AS (
                -- The page: a bounded sort of the keys (the "C" collation: byte order, cheaper and the same for these
                -- ASCII keys), then numbered.
                SELECT *, row_number() OVER (
                           ORDER BY environment COLLATE "C", is_subscription DESC, purchased_at, original_transaction_id COLLATE "C"
                       ) AS position
                FROM (
                    SELECT * FROM in_app
                    ORDER BY environment COLLATE "C", is_subscription DESC, purchased_at, original_transaction_id COLLATE "C"
                    LIMIT \(limit) OFFSET \(offset)
                ) page
            ), counted AS (
                SELECT count(*) AS total FROM in_app
            )
            SELECT e.kind, e.environment, e.original_transaction_id, e.transaction_id, e.product_id, e.bundle_id, e.product_type,
                   e.user_id, e.app_account_token, e.entitled_now, e.entitlement, e.reason, e.status_now, e.status,
                   e.purchased_at, e.expires_at, e.ends_at, e.revoked_at, e.auto_renew, e.ownership,
                   (ARRAY['user id', 'appAccountToken', 'originalTransactionId', 'transactionId', 'user id (an earlier owner)'])[f.rank], c.total
            FROM counted c
            LEFT JOIN found f ON true
            LEFT JOIN LATERAL (
                SELECT * FROM entitlements_now n
                WHERE n.environment = f.environment AND n.original_transaction_id = f.original_transaction_id
            ) e ON true
            ORDER BY f.position, e.entitlement
            """,
            logger: logger
        )
        var purchases: [CustomerPurchase] = []
        var total = 0
        for row in rows {
            let c = row.makeRandomAccess()
            total = Int(try c[21].decode(Int64.self))
            // The one row of a page past the end (or of a key naming nothing): the count alone.
            guard try c[0].decode(String?.self) != nil else { continue }
            let entitled = try c[9].decode(Bool.self)
            let entitlement = try c[10].decode(String?.self)
            let otid = try c[2].decode(String.self)
            let environment = try c[1].decode(String.self)
            if let last = purchases.last, last.environment == environment, last.originalTransactionID == otid {
                // One row per entitlement the purchase grants: fold them into one purchase.
                if entitled, let entitlement { purchases[purchases.count - 1].entitlements.append(entitlement) }
                purchases[purchases.count - 1].entitledNow = last.entitledNow || entitled
                continue
            }
            purchases.append(
                CustomerPurchase(
                    kind: try c[0].decode(String.self), environment: environment, originalTransactionID: otid,
                    transactionID: try c[3].decode(String?.self), productID: try c[4].decode(String?.self),
                    bundleID: try c[5].decode(String?.self), productType: try c[6].decode(String?.self),
                    userID: try c[7].decode(String?.self), appAccountToken: try c[8].decode(String?.self),
                    entitledNow: entitled, entitlements: entitled ? entitlement.map { [$0] } ?? [] : [],
                    reason: try c[11].decode(String.self), statusNow: try c[12].decode(String.self), status: try c[13].decode(String.self),
                    purchasedAt: try c[14].decode(Date?.self), expiresAt: try c[15].decode(Date?.self), endsAt: try c[16].decode(Date?.self),
                    revokedAt: try c[17].decode(Date?.self), autoRenew: try c[18].decode(Bool?.self), ownership: try c[19].decode(String?.self),
                    matchedBy: try c[20].decode(String.self)
                )
            )
        }
        return CustomerPurchasePage(purchases: purchases, total: total)
    }

    /// Every notification about the purchase, every transaction and renewal info of it that arrived on its own (the
    /// app's posts, Apple's answers to a sync or validate), and every time it was
    /// linked to a user or moved to another (`user_link_history`: support's answer to "why did I lose premium?"), in
    /// signed (recorded) order (notifications before a transaction at the same instant), at most ``timelineLimit``: the
    /// latest, when there are more.
    package func timeline(environment: String, originalTransactionID: String, logger: Logger) async throws -> [TimelineEntry] {
        try await timelines(of: [(environment, originalTransactionID)], logger: logger)[0]
    }

    /// ``timeline(environment:originalTransactionID:logger:)`` of each purchase, in one statement (one index probe
    /// per purchase, one round trip for all of them): the customer page of a token shared by many purchases.
    package func timelines(
        of purchases: [(environment: String, originalTransactionID: String)], logger: Logger
    ) async throws
        -> [[TimelineEntry]]
    {
        guard !purchases.isEmpty else { return [] }
        let environments = purchases.map(\.environment)
        let originalTransactionIDs = purchases.map(\.originalTransactionID)
        let rows = try await client.rows(
            """
            SELECT k.position::int8, e.kind, e.signed_at, e.type, e.subtype, e.product_id, e.price, e.currency, e.expires_at,
                   e.transaction_id, e.status, e.auto_renew, e.revoked_at, e.grace_period_expires_at, e.event_id, e.notification_uuid,
                   e.purchased_at
            FROM unnest(\(environments)::text[], \(originalTransactionIDs)::text[]) WITH ORDINALITY AS k(environment, original_transaction_id, position)
            CROSS JOIN LATERAL (
                SELECT * FROM (
                    -- Signed dates are Apple's; a fact without one (accepted, Apple always signs one) is placed when recorded.
                    SELECT 'notification' AS kind, 0 AS kind_rank, coalesce(n.signed_at, n.recorded_at) AS signed_at,
                           n.notification_type AS type, n.subtype, n.product_id,
                           (n.transaction_payload ->> 'price')::numeric::bigint AS price, n.transaction_payload ->> 'currency' AS currency,
                           storeledger_ms(n.transaction_payload ->> 'expiresDate') AS expires_at, n.transaction_id, n.status,
                           (n.renewal_payload ->> 'autoRenewStatus')::integer = 1 AS auto_renew,
                           storeledger_ms(n.transaction_payload ->> 'revocationDate') AS revoked_at,
                           storeledger_ms(n.renewal_payload ->> 'gracePeriodExpiresDate') AS grace_period_expires_at,
                           n.first_event_id AS event_id, n.notification_uuid,
                           storeledger_ms(n.transaction_payload ->> 'purchaseDate') AS purchased_at
                    FROM notifications n
                    WHERE n.environment = k.environment AND n.original_transaction_id = k.original_transaction_id
                    UNION ALL
                    SELECT 'transaction', 1, coalesce(t.signed_at, t.recorded_at), 'TRANSACTION', t.payload ->> 'transactionReason',
                           t.product_id, t.price, t.currency, t.expires_at, t.transaction_id, NULL, NULL, t.revoked_at, NULL,
                           t.first_event_id, NULL, t.purchased_at
                    FROM transactions t
                    WHERE t.environment = k.environment AND t.original_transaction_id = k.original_transaction_id AND t.standalone
                    UNION ALL
                    -- Renewal info fetched from Apple (a sync's or validate's Get All Subscription Statuses, the app): it
                    -- can end premium by itself (billing retry, expiry) when the notification saying so never arrived.
                    -- Its word on status in Apple's codes (4 grace period, 3 billing retry, 2 expired), as the fold reads it.
                    SELECT 'renewal info', 2, coalesce(r.signed_at, r.recorded_at), 'RENEWAL_INFO',
                           CASE WHEN r.is_in_billing_retry AND r.grace_period_expires_at > r.signed_at THEN 'in a billing grace period'
                                WHEN r.is_in_billing_retry THEN 'in billing retry'
                                WHEN r.expiration_intent IS NOT NULL THEN
                                    'expired: ' || CASE r.expiration_intent WHEN 1 THEN 'customer cancelled' WHEN 2 THEN 'billing error'
                                                                            WHEN 3 THEN 'price increase not consented'
                                                                            WHEN 4 THEN 'product unavailable' ELSE 'other reason' END
                           END,
                           r.product_id, NULL, NULL, NULL, NULL,
                           CASE WHEN r.is_in_billing_retry AND r.grace_period_expires_at > r.signed_at THEN 4
                                WHEN r.is_in_billing_retry THEN 3
                                WHEN r.expiration_intent IS NOT NULL THEN 2 END,
                           r.auto_renew_status = 1, NULL, r.grace_period_expires_at, r.first_event_id, NULL, NULL
                    FROM renewal_infos r
                    WHERE r.environment = k.environment AND r.original_transaction_id = k.original_transaction_id AND r.standalone
                    UNION ALL
                    SELECT 'ownership', 3, h.recorded_at, upper(h.change),
                           CASE WHEN h.from_user_id IS NULL THEN 'to ' || h.to_user_id ELSE h.from_user_id || ' → ' || h.to_user_id END
                               || ' (' || h.reason || ')',
                           NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, h.event_id, NULL, NULL
                    FROM user_link_history h
                    WHERE h.environment = k.environment AND h.original_transaction_id = k.original_transaction_id
                ) entries
                -- The newest entries when there are more: they explain the state now (why premium ended).
                ORDER BY signed_at DESC, kind_rank DESC, event_id DESC, notification_uuid DESC
                LIMIT \(Self.timelineLimit)
            ) e
            ORDER BY k.position, e.signed_at, e.kind_rank, e.event_id, e.notification_uuid
            """,
            logger: logger
        ).decode(
            (Int64, String, Date, String, String?, String?, Int64?, String?, Date?, String?, Int?, Bool?, Date?, Date?, Int64, String?, Date?).self
        )
        var result: [[TimelineEntry]] = Array(repeating: [], count: purchases.count)
        for (
            position, kind, signedAt, type, subtype, product, price, currency, expires, transaction, status, autoRenew, revoked, grace,
            event, uuid, purchased
        ) in rows {
            result[Int(position) - 1].append(
                TimelineEntry(
                    kind: kind, signedAt: signedAt, type: type, subtype: subtype, productID: product, price: price, currency: currency,
                    expiresAt: expires, transactionID: transaction, status: status, autoRenew: autoRenew, revokedAt: revoked,
                    gracePeriodExpiresAt: grace, eventID: event, notificationUUID: uuid, purchasedAt: purchased
                )
            )
        }
        return result
    }
}
