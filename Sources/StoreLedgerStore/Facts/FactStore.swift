import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Records verified facts (`notifications`, `transactions`, `renewal_infos`) and loads them back
/// as ``LedgerFact``s for the projections. Every method runs on the caller's connection, inside the
/// caller's transaction.
package enum FactStore {
    /// Records a whole batch of facts: one statement per table, each writing its rows in key order (notification UUID,
    /// content digest), so two transactions recording overlapping facts at once (Apple's retries in two workers'
    /// batches, or in two batches a rebuild applies side by side) wait for each other in one order instead of deadlocking.
    ///
    /// Equivalent to recording each fact on its own in event order: Apple's retries within the batch become
    /// deliveries of one notification row, counted; an event already recorded is not counted again. A
    /// notification's nested JWS texts are not stored (its nested payloads are, decoded), like ``NotificationFact``.
    /// Returns the facts that are new to the ledger: a notification whose UUID was not recorded before, and standalone
    /// signed data whose content was not (a fact recorded before, even by a transaction that committed while this one
    /// waited on it, changes no row: the rows it would touch are already folded with it). The batch's decoded facts
    /// are remembered in `cache` for later refolds.
    @discardableResult
    package static func record(
        _ batch: FactBatch, on connection: PostgresConnection, cache: DecodedFactCache, logger: Logger
    ) async throws -> [LedgerFact] {
        var newNotifications: Set<String> = []
        if !batch.notifications.isEmpty {
            // Absent nested payloads travel as '' (a JSON text is never empty) because arrays carry no NULLs here.
            let notifications = batch.notifications
            let rows = try await connection.query(
                """
                WITH input AS (
                    SELECT * FROM unnest(\(notifications.map(\.eventID))::int8[], \(notifications.map(\.uuid))::text[],
                                         \(notifications.map(\.digestHex))::text[],
                                         \(notifications.map(\.payload))::text[], \(notifications.map { $0.transaction ?? UTF8Text(Data()) })::text[],
                                         \(notifications.map { $0.renewalInfo ?? UTF8Text(Data()) })::text[])
                        AS i(event_id, uuid, digest, payload, transaction_payload, renewal_payload)
                ), delivery AS (
                    INSERT INTO notification_deliveries (event_id, notification_uuid)
                    SELECT event_id, uuid FROM input
                    ON CONFLICT (event_id) DO NOTHING
                    RETURNING event_id, notification_uuid
                ), grouped AS (
                    SELECT d.notification_uuid AS uuid,
                           min(d.event_id) AS first_event_id, max(d.event_id) AS last_event_id, count(*) AS deliveries,
                           (array_agg(i.digest ORDER BY d.event_id))[1] AS digest,
                           (array_agg(i.payload ORDER BY d.event_id))[1] AS payload,
                           (array_agg(i.transaction_payload ORDER BY d.event_id))[1] AS transaction_payload,
                           (array_agg(i.renewal_payload ORDER BY d.event_id))[1] AS renewal_payload
                    FROM delivery d JOIN input i ON i.event_id = d.event_id
                    GROUP BY d.notification_uuid
                ), recorded AS (
                    INSERT INTO notifications AS n (notification_uuid, fact_sha256, payload, transaction_payload, renewal_payload,
                                                    first_event_id, last_event_id, delivery_count)
                    SELECT uuid, decode(digest, 'hex'), payload::jsonb #- '{data,signedTransactionInfo}' #- '{data,signedRenewalInfo}',
                           nullif(transaction_payload, '')::jsonb, nullif(renewal_payload, '')::jsonb,
                           first_event_id, last_event_id, deliveries
                    FROM grouped
                    ORDER BY uuid
                    ON CONFLICT (notification_uuid) DO UPDATE
                    SET first_event_id = least(n.first_event_id, excluded.first_event_id),
                        last_event_id = greatest(n.last_event_id, excluded.last_event_id),
                        delivery_count = n.delivery_count + excluded.delivery_count
                    RETURNING n.notification_uuid, n.xmax = 0 AS inserted
                )
                SELECT coalesce(array_agg(notification_uuid) FILTER (WHERE inserted), '{}') FROM recorded
                """,
                logger: logger
            )
            // One row (the UUIDs inserted, as one array) rather than a row per notification.
            for try await inserted in rows.decode([String].self) { newNotifications.formUnion(inserted) }
        }
        let newTransactions = try await recordSignedFacts(
            batch.transactions.values.sorted { $0.digestHex < $1.digestHex }, table: "transactions", on: connection, logger: logger)
        let newRenewalInfos = try await recordSignedFacts(
            batch.renewalInfos.values.sorted { $0.digestHex < $1.digestHex }, table: "renewal_infos", on: connection, logger: logger)
        cache.remember(batch.refoldedFacts.map { (.init(kind: $0.fact.kind, digestHex: $0.digestHex), $0.fact) })
        return batch.newFacts(notifications: newNotifications, transactions: newTransactions, renewalInfos: newRenewalInfos)
    }

    /// Upserts distinct transactions or renewal infos in one statement; returns the digests of the standalone ones not
    /// recorded before (nested signed data is part of its notification: whether it is new is never asked, so the
    /// statement sends no row for it, and none for signed data recorded before).
    private static func recordSignedFacts(
        _ facts: [FactBatch.SignedFact], table: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> Set<String> {
        guard !facts.isEmpty else { return [] }
        let query: PostgresQuery = """
            WITH recorded AS (
                INSERT INTO \(unescaped: table) AS f (fact_sha256, payload, standalone, first_event_id)
                SELECT decode(digest, 'hex'), payload::jsonb, standalone, first_event_id
                FROM unnest(\(facts.map(\.digestHex))::text[], \(facts.map(\.payload))::text[], \(facts.map(\.standalone))::bool[],
                            \(facts.map(\.firstEventID))::int8[]) AS i(digest, payload, standalone, first_event_id)
                ON CONFLICT (fact_sha256) DO UPDATE
                SET standalone = f.standalone OR excluded.standalone,
                    first_event_id = least(f.first_event_id, excluded.first_event_id)
                RETURNING f.fact_sha256, f.xmax = 0 AS inserted, f.standalone
            )
            SELECT encode(fact_sha256, 'hex') FROM recorded WHERE inserted AND standalone
            """
        var inserted: Set<String> = []
        for try await digest in try await connection.query(query, logger: logger).decode(String.self) { inserted.insert(digest) }
        return inserted
    }

    /// Every fact of each subscription in `keys` (one statement, and one more for facts not held decoded); the result
    /// has one entry per key. Facts `cache` holds are not fetched.
    package static func subscriptionFacts(
        _ keys: [SubscriptionKey], on connection: PostgresConnection, cache: DecodedFactCache, logger: Logger
    ) async throws -> [SubscriptionKey: [LedgerFact]] {
        try await facts(
            of: keys, ids: keys.map(\.originalTransactionID.rawValue), environments: keys.map(\.environment.rawValue),
            idColumn: "original_transaction_id", standalone: [("transactions", "transaction"), ("renewal_infos", "renewal_info")],
            on: connection, cache: cache, logger: logger
        )
    }

    /// Every fact of each one-time purchase in `keys` (one statement, and one more for facts not held decoded); the
    /// result has one entry per key. Facts `cache` holds are not fetched.
    package static func purchaseFacts(
        _ keys: [PurchaseKey], on connection: PostgresConnection, cache: DecodedFactCache, logger: Logger
    ) async throws -> [PurchaseKey: [LedgerFact]] {
        try await facts(
            of: keys, ids: keys.map(\.transactionID.rawValue), environments: keys.map(\.environment.rawValue),
            idColumn: "transaction_id", standalone: [("transactions", "transaction")],
            on: connection, cache: cache, logger: logger
        )
    }

    /// The notifications, and the standalone rows of each `(table, kind)`, whose `idColumn` and environment match
    /// each key, grouped by key; every key gets an entry, empty when it has no facts.
    ///
    /// Two steps: the first lists each key's facts by content digest (index lookups, no JSON); facts the
    /// ``DecodedFactCache`` holds are taken from it, and only the others are fetched and decoded, in one more
    /// statement. Notifications recorded before digests were stored have none and are always fetched.
    private static func facts<Key: Hashable>(
        of keys: [Key], ids: [String], environments: [String], idColumn: String, standalone tables: [(table: String, kind: String)],
        on connection: PostgresConnection, cache: DecodedFactCache, logger: Logger
    ) async throws -> [Key: [LedgerFact]] {
        guard !keys.isEmpty else { return [:] }
        let standalone = tables.map { table, kind in
            """
            UNION ALL
            SELECT '\(kind)', encode(fact_sha256, 'hex'), encode(fact_sha256, 'hex')
            FROM \(table) WHERE standalone AND environment = k.environment AND \(idColumn) = k.id
            """
        }.joined(separator: "\n")
        let query: PostgresQuery = """
            SELECT k.i, f.kind, f.id, f.digest
            FROM unnest(\(environments)::text[], \(ids)::text[]) WITH ORDINALITY AS k(environment, id, i)
            CROSS JOIN LATERAL (
                SELECT 'notification' AS kind, notification_uuid AS id, encode(fact_sha256, 'hex') AS digest
                FROM notifications WHERE environment = k.environment AND \(unescaped: idColumn) = k.id
                \(unescaped: standalone)
            ) f
            """

        var listed: [(key: Key, row: StoredFact)] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (ordinal, kindName, id, digest) in rows.decode((Int64, String, String, String?).self) {
            let row = StoredFact.RowID(kind: try StoredFact.kind(named: kindName), id: id)
            listed.append((keys[Int(ordinal) - 1], StoredFact(rowID: row, digestHex: digest)))
        }
        var facts: [Key: [LedgerFact]] = Dictionary(uniqueKeysWithValues: keys.map { ($0, []) })
        var missing: [(key: Key, row: StoredFact)] = []
        for (entry, cached) in zip(listed, cache.facts(listed.map(\.row.cacheKey))) {
            if let cached {
                facts[entry.key, default: []].append(cached)
            } else {
                missing.append(entry)
            }
        }
        guard !missing.isEmpty else { return facts }

        let fetched = try await fetch(Set(missing.map(\.row.rowID)), on: connection, logger: logger)
        var fetchedByDigest: [(key: DecodedFactCache.Key, fact: LedgerFact)] = []
        for (key, row) in missing {
            guard let fact = fetched[row.rowID] else {
                // Facts are only removed by a rebuild's swap, which waits for writers; if one goes anyway, the
                // batch is retried rather than folded without it.
                throw StoreError(
                    .concurrentChange,
                    "the \(row.rowID.kind) fact \(row.rowID.id) disappeared while its row was being refolded"
                )
            }
            facts[key, default: []].append(fact)
            if let cacheKey = row.cacheKey { fetchedByDigest.append((cacheKey, fact)) }
        }
        cache.remember(fetchedByDigest)
        return facts
    }

    /// A stored fact as the first step lists it: its kind, row id (notification UUID, or content digest) and
    /// content digest (absent for notifications recorded before digests were stored).
    private struct StoredFact {
        /// A fact's kind and its row id within its table.
        struct RowID: Hashable {
            /// The fact's kind.
            let kind: LedgerFactKind
            /// Its row id within its table.
            let id: String
        }

        /// Where it is stored.
        let rowID: RowID
        /// SHA-256 of its verified bytes, hex.
        let digestHex: String?

        /// Its key in the decoded-fact cache, if it has a digest.
        var cacheKey: DecodedFactCache.Key? {
            digestHex.map { DecodedFactCache.Key(kind: rowID.kind, digestHex: $0) }
        }

        /// The kind a query names.
        static func kind(named name: String) throws -> LedgerFactKind {
            switch name {
            case "notification": .notification
            case "transaction": .transaction
            case "renewal_info": .renewalInfo
            default: throw StoreError.configuration("unknown fact kind \(name)")
            }
        }
    }

    /// Fetches and decodes the given stored facts, in one statement.
    private static func fetch(
        _ rows: Set<StoredFact.RowID>, on connection: PostgresConnection, logger: Logger
    ) async throws -> [StoredFact.RowID: LedgerFact] {
        func ids(_ kind: LedgerFactKind) -> [String] { rows.filter { $0.kind == kind }.map(\.id) }
        let result = try await connection.query(
            """
            SELECT 'notification', notification_uuid, payload::text, transaction_payload::text, renewal_payload::text
            FROM notifications WHERE notification_uuid = ANY (\(ids(.notification))::text[])
            UNION ALL
            SELECT 'transaction', encode(fact_sha256, 'hex'), payload::text, NULL, NULL
            FROM transactions WHERE fact_sha256 IN (SELECT decode(d, 'hex') FROM unnest(\(ids(.transaction))::text[]) AS d)
            UNION ALL
            SELECT 'renewal_info', encode(fact_sha256, 'hex'), payload::text, NULL, NULL
            FROM renewal_infos WHERE fact_sha256 IN (SELECT decode(d, 'hex') FROM unnest(\(ids(.renewalInfo))::text[]) AS d)
            """,
            logger: logger
        )
        var facts: [StoredFact.RowID: LedgerFact] = [:]
        for try await (kindName, id, payload, transaction, renewal) in result.decode((String, String, String, String?, String?).self) {
            let row = StoredFact.RowID(kind: try StoredFact.kind(named: kindName), id: id)
            facts[row] = try decodeFact(kind: row.kind, payload: payload, transaction: transaction, renewal: renewal)
        }
        return facts
    }

    /// One stored fact back as a ``LedgerFact``.
    private static func decodeFact(
        kind: LedgerFactKind, payload: String, transaction: String?, renewal: String?
    ) throws -> LedgerFact {
        switch kind {
        case .notification:
            return .notification(
                NotificationFact(
                    payload: try NotificationPayload.decode(json: Data(payload.utf8)),
                    transaction: try transaction.map { try TransactionPayload.decode(json: Data($0.utf8)) },
                    renewalInfo: try renewal.map { try RenewalInfoPayload.decode(json: Data($0.utf8)) }
                ))
        case .transaction:
            return .transaction(try TransactionPayload.decode(json: Data(payload.utf8)))
        case .renewalInfo:
            return .renewalInfo(try RenewalInfoPayload.decode(json: Data(payload.utf8)))
        }
    }
}
