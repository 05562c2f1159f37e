import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// The transactional outbox of outgoing webhooks: events are enqueued in the projection's transaction, with one
/// delivery per active endpoint; nothing is enqueued while no endpoint is configured.
package enum WebhookOutbox {
    /// Enqueues `events` (already-known ids are skipped) and their deliveries, on the caller's connection. The user
    /// is resolved from `user_links`, else from the owner of the app account token. `entitled` is taken from
    /// `entitlements_at(now())` — whether the row grants anything now, the definition every route uses — so call this
    /// after the rows are written; the events' own `entitled` (the fold's, clock-free) is replaced. `ends_at` is added
    /// from the same place: when access ends (a grace period's end, a revocation's date), which `expires_at`, the
    /// period's end, is not. `sequence` is the order of enqueueing (`webhook_event_sequence`): a receiver applies a
    /// purchase's events in it, which `occurred_at` cannot order (a rebuild's repair carries its facts' instant).
    ///
    /// Two things the events read are decided outside their rows' locks, so the events first take their locks, in
    /// statements before the one that reads them: a purchase's rows (a restore on another device is a row of its own)
    /// stand or fall together in `entitled` (``purchaseLockKeys(of:)``), and the owner of an app account token decides
    /// `user_id` (``UserLinkStore/waitForTokenClaims(on:logger:)``). A projection of another row of the purchase in
    /// progress (a refund while an app posts its restored copy), or an app's first claim of a token, then commits
    /// first, and this reads what it wrote, sequenced after it; without it, the copy's event could say `entitled: true`
    /// after the refund's false, and an event could name no user while its token's owner was being recorded (and the
    /// claim's announcement not see its row). Every transaction takes these after its rows' locks, purchases first, so
    /// none waits for another in a cycle. `locking` false is for a caller no other writer can run beside (the
    /// rebuild's swap), whose thousands of events would otherwise fill PostgreSQL's bounded lock table.
    package static func enqueue(_ events: [WebhookEvent], locking: Bool = true, on connection: PostgresConnection, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        if locking {
            try await ReadModelStore.lock(purchaseLockKeys(of: events), on: connection, logger: logger)
            if events.contains(where: { !($0.appAccountToken ?? "").isEmpty }) {
                try await UserLinkStore.waitForTokenClaims(on: connection, logger: logger)
            }
        }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let payloads = try events.map { String(decoding: try encoder.encode(Payload($0)), as: UTF8.self) }
        try await connection.query(
            """
            WITH input AS (
                -- A volatile call in the CTE: once per event, in order, the same value for its column and payload (a
                -- nextval after the session's check of the history, so a failover never issues a delivered number again).
                SELECT *, storeledger_next_webhook_sequence() AS sequence
                FROM unnest(\(events.map { $0.id.uuidString.lowercased() })::uuid[], \(events.map(\.type))::text[],
                                     \(events.map { $0.appAccountToken ?? "" })::text[], \(events.map { $0.productID ?? "" })::text[],
                                     \(events.map(\.environment))::text[], \(events.map(\.originalTransactionID))::text[],
                                     \(events.map { $0.transactionID ?? "" })::text[], \(events.map(\.entitled))::bool[],
                                     \(events.map { $0.expiresAt?.timeIntervalSince1970 ?? -1 })::float8[],
                                     \(events.map(\.occurredAt.timeIntervalSince1970))::float8[], \(payloads)::jsonb[])
                    AS i(id, type, token, product, environment, original, transaction, entitled, expires, occurred, payload)
                WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE active)
            ), inserted AS (
                INSERT INTO webhook_events (id, type, user_id, app_account_token, product_id, environment, original_transaction_id,
                                            transaction_id, entitled, expires_at, occurred_at, payload, sequence)
                SELECT i.id, i.type,
                       coalesce((SELECT l.user_id FROM user_links l WHERE l.environment = i.environment AND l.original_transaction_id = i.original),
                                (SELECT t.user_id FROM app_account_tokens t WHERE t.app_account_token = lower(nullif(i.token, '')))),
                       nullif(i.token, ''), nullif(i.product, ''), i.environment, i.original, nullif(i.transaction, ''), now_.entitled,
                       CASE WHEN i.expires >= 0 THEN to_timestamp(i.expires) END, to_timestamp(i.occurred),
                       jsonb_set(i.payload, '{entitled}', to_jsonb(now_.entitled))
                           || CASE WHEN now_.ends_at IS NULL THEN '{}'::jsonb
                                   ELSE jsonb_build_object('ends_at', to_char(now_.ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')) END
                           || jsonb_build_object('sequence', i.sequence),
                       i.sequence
                FROM input i
                CROSS JOIN LATERAL (
                    SELECT coalesce(bool_or(e.entitled_now), false) AS entitled, max(e.ends_at) AS ends_at
                    FROM entitlements_at(now()) e
                    WHERE e.kind = split_part(i.type, '.', 1) AND e.environment = i.environment AND e.original_transaction_id = i.original
                      AND (e.kind = 'subscription' OR e.transaction_id = i.transaction)
                ) now_
                ON CONFLICT (id) DO NOTHING
                RETURNING id, user_id
            )
            INSERT INTO webhook_deliveries (event_id, endpoint_id)
            SELECT inserted.id, e.id FROM inserted CROSS JOIN webhook_endpoints e WHERE e.active
            """,
            logger: logger
        )
    }

    /// The locks of the purchases `events` are about (one per environment and original transaction; a subscription is
    /// one row, whose lock its projection holds), sorted.
    package static func purchaseLockKeys(of events: [WebhookEvent]) -> [String] {
        Set(
            events.filter { $0.type.hasPrefix("\(PurchaseState.kind).") }.map {
                ReadModelStore.purchaseLockKey(environment: $0.environment, originalTransactionID: $0.originalTransactionID)
            }
        ).sorted()
    }

    /// The JSON body delivered (the user id is added at delivery time from the stored row).
    struct Payload: Encodable {
        var id: String
        var type: String
        var app_account_token: String?
        var product_id: String?
        var environment: String
        var original_transaction_id: String
        var transaction_id: String?
        var entitled: Bool
        var expires_at: Date?
        var occurred_at: Date
        /// The owner before a `<kind>.transferred` event.
        var previous_user_id: String?

        init(_ event: WebhookEvent) {
            id = event.id.uuidString.lowercased()
            type = event.type
            app_account_token = event.appAccountToken
            product_id = event.productID
            environment = event.environment
            original_transaction_id = event.originalTransactionID
            transaction_id = event.transactionID
            entitled = event.entitled
            expires_at = event.expiresAt
            occurred_at = event.occurredAt
            previous_user_id = event.previousUserID
        }
    }

    /// Announces a purchase's change of owner (``UserLinkChange``), made by `eventID` in this transaction, with the
    /// row of `transaction` as it stands: `<kind>.linked` when it had no owner, `<kind>.transferred` (beside
    /// `previous_user_id`, who no longer has it) when it had another. The row's projection announces only what Apple's
    /// facts change; a host that grants access from webhooks learns this way who holds the purchase now. Nothing when
    /// the owner is unchanged or no endpoint is active. Call it holding the row's lock (``ReadModelStore/lockKey(of:)``,
    /// taken before the link's, as the intake does): a projection of the row in progress then commits first, its event's
    /// sequence before this one, and this reads what it wrote.
    package static func announce(
        _ change: UserLinkChange, of transaction: TransactionPayload, causedBy eventID: EventID, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let (kind, previous): (String, String?)
        switch change {
        case .unchanged: return
        case .linked: (kind, previous) = ("linked", nil)
        case .transferred(let from): (kind, previous) = ("transferred", from.rawValue)
        }
        func identity(_ row: some ProjectedRow) -> [String] {
            [row.environment.rawValue, row.familyTransactionID, previous ?? "", String(eventID.rawValue)]
        }
        let announced: [WebhookEvent]
        if let key = transaction.subscriptionKey {
            announced = try await ownerEvents(
                [key], SubscriptionState.self, change: kind, previousUserID: previous, identity: identity, on: connection, logger: logger)
        } else if let key = transaction.purchaseKey {
            announced = try await ownerEvents(
                [key], PurchaseState.self, change: kind, previousUserID: previous, identity: identity, on: connection, logger: logger)
        } else {
            announced = []
        }
        try await enqueue(announced, on: connection, logger: logger)
    }

    /// The `<kind>.<change>` events of a change of owner about the rows of `keys` as they stand, in key order, each id
    /// from `identity` (none while no endpoint is active, or for a key with no row): what ``announce(_:of:causedBy:on:logger:)``
    /// and ``announceClaim(ofToken:causedBy:on:logger:)`` enqueue.
    private static func ownerEvents<Row: ProjectedRow & StoredRow>(
        _ keys: [Row.Key], _: Row.Type, change: String, previousUserID: String? = nil, identity: (Row) -> [String],
        on connection: PostgresConnection, logger: Logger
    ) async throws -> [WebhookEvent] {
        let rows: [Row.Key: Row] = try await ReadModelStore.currentIfWebhooksActive(keys, on: connection, logger: logger) ?? [:]
        return keys.sorted().compactMap { rows[$0] }.map { row in
            Self.event(row, change: change, occurredAt: Date(), previousUserID: previousUserID, identity: identity(row))
        }
    }

    /// Announces `<kind>.linked` for the purchases a first claim of `token` (by `eventID`, in this transaction) gives an
    /// owner: the rows carrying the token with no link of their own, which `entitlements_at` now gives to the token's
    /// owner. Without it, a host that grants access from webhooks would never hear of a purchase whose notifications
    /// arrived before the app posted anything (another product bought with the same token). Nothing while no endpoint
    /// is active. The caller holds its own transaction's row lock, so the other rows' locks (and their purchases') are
    /// only tried: waiting for one could close a cycle with a projection taking them in order. A row being projected
    /// meanwhile is left out (logged): the events of that projection carry the token, so they wait for this claim
    /// (the token's lock) and name the owner; only one that changes nothing a subscriber sees goes unannounced.
    package static func announceClaim(
        ofToken token: String, causedBy eventID: EventID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let rows = try await connection.query(
            """
            WITH hooks AS (SELECT 1 WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE active))
            SELECT 'subscription', s.environment, s.original_transaction_id, s.original_transaction_id
            FROM hooks, subscriptions s
            WHERE lower(s.app_account_token) = \(token.lowercased())
              AND NOT EXISTS (SELECT 1 FROM user_links l WHERE l.environment = s.environment AND l.original_transaction_id = s.original_transaction_id)
            UNION ALL
            SELECT 'purchase', p.environment, p.transaction_id, coalesce(p.original_transaction_id, p.transaction_id)
            FROM hooks, purchases p
            WHERE lower(p.app_account_token) = \(token.lowercased())
              AND NOT EXISTS (SELECT 1 FROM user_links l WHERE l.environment = p.environment
                              AND l.original_transaction_id = coalesce(p.original_transaction_id, p.transaction_id))
            """,
            logger: logger
        )
        var subscriptions: [SubscriptionKey] = []
        var purchases: [(key: PurchaseKey, family: String)] = []
        for (kind, environment, id, family) in try await rows.decode((String, String, String, String).self).readToEnd() {
            let environment = AppStoreEnvironment(rawValue: environment)
            if kind == SubscriptionState.kind {
                subscriptions.append(SubscriptionKey(environment: environment, originalTransactionID: OriginalTransactionID(id)))
            } else {
                purchases.append(
                    (
                        PurchaseKey(environment: environment, transactionID: TransactionID(id)),
                        ReadModelStore.purchaseLockKey(environment: environment.rawValue, originalTransactionID: family)
                    ))
            }
        }
        let wanted =
            subscriptions.map { ReadModelStore.lockKey($0, of: SubscriptionState.self) }
            + purchases.flatMap { [ReadModelStore.lockKey($0.key, of: PurchaseState.self), $0.family] }
        let locked = try await ReadModelStore.tryLock(wanted, on: connection, logger: logger)
        let lockedSubscriptions = subscriptions.filter { locked.contains(ReadModelStore.lockKey($0, of: SubscriptionState.self)) }
        let lockedPurchases = purchases.filter {
            locked.contains(ReadModelStore.lockKey($0.key, of: PurchaseState.self)) && locked.contains($0.family)
        }
        .map(\.key)
        if lockedSubscriptions.count + lockedPurchases.count < subscriptions.count + purchases.count {
            logger.notice(
                "a purchase carrying a newly claimed token was being projected: its link is not announced",
                metadata: [
                    "event": "\(eventID)",
                    "unannounced": "\(subscriptions.count + purchases.count - lockedSubscriptions.count - lockedPurchases.count)",
                ])
        }
        func identity(_ row: some ProjectedRow) -> [String] {
            [row.environment.rawValue, row.familyTransactionID, "token", String(eventID.rawValue), row.currentTransactionID?.rawValue ?? ""]
        }
        try await enqueue(
            try await ownerEvents(lockedSubscriptions, SubscriptionState.self, change: "linked", identity: identity, on: connection, logger: logger)
                + ownerEvents(lockedPurchases, PurchaseState.self, change: "linked", identity: identity, on: connection, logger: logger),
            on: connection, logger: logger)
    }

    /// The webhook events a row's projection implies: none when nothing a subscriber cares about changed, else one
    /// typed `<kind>.<change>` (`subscription.renewed`, `purchase.refunded`). A row that entitled and is removed (by a
    /// rebuild's swap: its facts no longer verify, or their events were archived) is `<kind>.removed`, so a subscriber
    /// that grants access from webhooks learns that it ends.
    package static func events<Row: ProjectedRow>(old: Row?, new: Row?) -> [WebhookEvent] {
        guard let new else {
            guard let old, old.entitled else { return [] }
            return [Self.event(old, change: "removed", occurredAt: Date())]
        }
        guard let change = Row.change(from: old, to: new) else { return [] }
        return [Self.event(new, change: change.kind.rawValue, occurredAt: new.lastSignedAt?.date ?? Date(timeIntervalSince1970: 0))]
    }

    /// The event `<kind>.<change>` about `row` as it stands (its id from `identity` when given, else from its fields).
    private static func event<Row: ProjectedRow>(
        _ row: Row, change: String, occurredAt: Date, previousUserID: String? = nil, identity: [String]? = nil
    ) -> WebhookEvent {
        WebhookEvent(
            type: "\(Row.kind).\(change)", appAccountToken: row.appAccountToken?.rawValue, productID: row.productID?.rawValue,
            environment: row.environment.rawValue, originalTransactionID: row.familyTransactionID,
            transactionID: row.currentTransactionID?.rawValue, entitled: row.entitled, expiresAt: row.expiresAt?.date,
            occurredAt: occurredAt, previousUserID: previousUserID, identity: identity
        )
    }
}
