import Foundation
package import Logging
import NIOCore
package import PostgresNIO
package import StoreLedgerCore

/// What reconciliation writes (`reconciled_notifications` and the appended events): a notification found in Apple's
/// history is appended once, unless the ledger already knows it. The reconciler in the worker asks Apple; every
/// statement is here.
package struct ReconciliationStore: Sendable {
    /// The database.
    package let client: PostgresClient
    /// How the append reaches Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions

    /// Creates the store (`sessions` default: a direct connection).
    package init(client: PostgresClient, sessions: DatabaseSessions = DatabaseSessions()) {
        self.client = client
        self.sessions = sessions
    }

    /// Appends `signedPayload` as an event with source `reconciliation` (in one checked transaction) unless it is already
    /// known: its `notificationUUID` is a verified notification, was appended by an earlier reconciliation, or a received
    /// event still waiting to be processed has exactly the body Apple sends for it (`{"signedPayload":"…"}`, found by the
    /// log's body digest index: searching every waiting body for the payload cost backlog × window, at the moment a
    /// backlog is largest). Without a readable UUID it is always appended (the worker judges it). Concurrent reconcilers
    /// serialize per UUID; the transaction bounds its waits (``TransactionLimits/claim(lease:)`` with 30 s). Returns
    /// whether it appended.
    package func appendUnlessKnown(
        _ signedPayload: String, notificationUUID uuid: String?, environmentHint: EnvironmentHint, environmentName: String, logger: Logger
    ) async throws -> Bool {
        let body = ByteBuffer(
            bytes: try JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload], options: [.withoutEscapingSlashes]))
        // Bounded on the server: a reconciler that vanished holding a UUID's lock frees it within the idle limit, and one
        // waiting for it (or for a table a migration holds) gives up at the lock limit.
        return try await client.inTransaction(logger: logger, sessions: sessions, limits: .claim(lease: .seconds(30))) {
            [sessions] connection in
            if let uuid {
                try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\("reconcile/" + uuid), 0))", logger: logger).readToEnd()
                let known = try await connection.query(
                    """
                    SELECT EXISTS (SELECT 1 FROM notifications WHERE notification_uuid = \(uuid))
                        OR EXISTS (SELECT 1 FROM reconciled_notifications WHERE notification_uuid = \(uuid))
                        OR EXISTS (SELECT 1 FROM events e JOIN event_queue q ON q.event_id = e.id AND q.event_received_at = e.received_at
                                   WHERE e.body_sha256 = sha256(\(body)) AND q.state IN ('pending', 'processing'))
                    """,
                    logger: logger
                ).decode(Bool.self).readToEnd()
                if known.contains(true) { return false }
            }
            let appended = try await EventLog.append(
                NewEvent(
                    source: .reconciliation, environmentHint: environmentHint, route: "reconciliation", body: body,
                    contentType: "application/json"
                ),
                on: connection, sessions: sessions, logger: logger
            )
            if let uuid {
                try await connection.query(
                    """
                    INSERT INTO reconciled_notifications (notification_uuid, event_id, environment)
                    VALUES (\(uuid), \(appended.id.rawValue), \(environmentName))
                    """,
                    logger: logger
                ).readToEnd()
            }
            return true
        }
    }
}
