import Crypto
public import Foundation
public import Logging
public import PostgresNIO
public import StoreLedgerCore

/// Records verified facts (`notifications`, `transactions`, `renewal_infos`) and loads them back
/// as ``LedgerFact``s for the projections. Every method runs on the caller's connection, inside the
/// caller's transaction.
public enum FactStore {
    /// Records a verified notification delivered by `eventID` and its nested signed data.
    ///
    /// Apple's retries (the same notificationUUID) become further deliveries of the same row.
    /// Returns false when this event was already recorded (the same event processed again).
    public static func recordNotification(
        uuid: NotificationUUID,
        payloadJSON: Data,
        transactionJSON: Data?,
        renewalInfoJSON: Data?,
        eventID: EventID,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        let payload = String(decoding: payloadJSON, as: UTF8.self)
        let transaction = transactionJSON.map { String(decoding: $0, as: UTF8.self) }
        let renewal = renewalInfoJSON.map { String(decoding: $0, as: UTF8.self) }
        let rows = try await connection.query(
            """
            WITH delivery AS (
                INSERT INTO notification_deliveries (event_id, notification_uuid)
                VALUES (\(eventID.rawValue), \(uuid.rawValue))
                ON CONFLICT (event_id) DO NOTHING
                RETURNING event_id
            )
            INSERT INTO notifications AS n (notification_uuid, payload, transaction_payload, renewal_payload, first_event_id, last_event_id)
            SELECT \(uuid.rawValue), \(payload)::jsonb, \(transaction)::jsonb, \(renewal)::jsonb, event_id, event_id FROM delivery
            ON CONFLICT (notification_uuid) DO UPDATE
            SET first_event_id = least(n.first_event_id, excluded.first_event_id),
                last_event_id = greatest(n.last_event_id, excluded.last_event_id),
                delivery_count = n.delivery_count + 1
            RETURNING n.notification_uuid
            """,
            logger: logger
        )
        for try await _ in rows { return true }
        return false
    }

    /// Records a verified transaction; `standalone` when it arrived on its own rather than nested.
    public static func recordTransaction(
        payloadJSON: Data, standalone: Bool, eventID: EventID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await record(table: "transactions", payloadJSON: payloadJSON, standalone: standalone, eventID: eventID, on: connection, logger: logger)
    }

    /// Records a verified renewal info; `standalone` when it arrived on its own rather than nested.
    public static func recordRenewalInfo(
        payloadJSON: Data, standalone: Bool, eventID: EventID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await record(table: "renewal_infos", payloadJSON: payloadJSON, standalone: standalone, eventID: eventID, on: connection, logger: logger)
    }

    private static func record(
        table: String, payloadJSON: Data, standalone: Bool, eventID: EventID,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        // One row per distinct signed content; the digest of the decoded bytes identifies it.
        let digest = Data(SHA256.hash(data: payloadJSON))
        let payload = String(decoding: payloadJSON, as: UTF8.self)
        var query = PostgresQuery(
            unsafeSQL: """
                INSERT INTO \(table) AS f (fact_sha256, payload, standalone, first_event_id)
                VALUES ($1, $2::jsonb, $3, $4)
                ON CONFLICT (fact_sha256) DO UPDATE
                SET standalone = f.standalone OR excluded.standalone,
                    first_event_id = least(f.first_event_id, excluded.first_event_id)
                """
        )
        try query.binds.append(digest, context: .default)
        query.binds.append(payload, context: .default)
        query.binds.append(standalone, context: .default)
        query.binds.append(eventID.rawValue, context: .default)
        try await connection.query(query, logger: logger)
    }

    /// Every fact of one subscription: its notifications and its standalone transactions and renewal infos.
    public static func subscriptionFacts(
        _ key: SubscriptionKey, on connection: PostgresConnection, logger: Logger
    ) async throws -> [LedgerFact] {
        let environment = key.environment.rawValue
        let id = key.originalTransactionID.rawValue
        let rows = try await connection.query(
            """
            SELECT 'notification', payload::text, transaction_payload::text, renewal_payload::text
            FROM notifications WHERE environment = \(environment) AND original_transaction_id = \(id)
            UNION ALL
            SELECT 'transaction', payload::text, NULL, NULL
            FROM transactions WHERE standalone AND environment = \(environment) AND original_transaction_id = \(id)
            UNION ALL
            SELECT 'renewal_info', payload::text, NULL, NULL
            FROM renewal_infos WHERE standalone AND environment = \(environment) AND original_transaction_id = \(id)
            """,
            logger: logger
        )
        return try await decodeFacts(rows)
    }

    /// Every fact of one one-time purchase: its notifications and its standalone transactions.
    public static func purchaseFacts(
        _ key: PurchaseKey, on connection: PostgresConnection, logger: Logger
    ) async throws -> [LedgerFact] {
        let environment = key.environment.rawValue
        let id = key.transactionID.rawValue
        let rows = try await connection.query(
            """
            SELECT 'notification', payload::text, transaction_payload::text, renewal_payload::text
            FROM notifications WHERE environment = \(environment) AND transaction_id = \(id)
            UNION ALL
            SELECT 'transaction', payload::text, NULL, NULL
            FROM transactions WHERE standalone AND environment = \(environment) AND transaction_id = \(id)
            """,
            logger: logger
        )
        return try await decodeFacts(rows)
    }

    private static func decodeFacts(_ rows: PostgresRowSequence) async throws -> [LedgerFact] {
        let decoder = JSONDecoder()
        var facts: [LedgerFact] = []
        for try await (kind, payload, transaction, renewal) in rows.decode((String, String, String?, String?).self) {
            switch kind {
            case "notification":
                facts.append(.notification(NotificationFact(
                    payload: try decoder.decode(NotificationPayload.self, from: Data(payload.utf8)),
                    transaction: try transaction.map { try decoder.decode(TransactionPayload.self, from: Data($0.utf8)) },
                    renewalInfo: try renewal.map { try decoder.decode(RenewalInfoPayload.self, from: Data($0.utf8)) }
                )))
            case "transaction":
                facts.append(.transaction(try decoder.decode(TransactionPayload.self, from: Data(payload.utf8))))
            default:
                facts.append(.renewalInfo(try decoder.decode(RenewalInfoPayload.self, from: Data(payload.utf8))))
            }
        }
        return facts
    }
}
