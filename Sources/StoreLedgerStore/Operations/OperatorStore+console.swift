import Foundation
package import Logging
import PostgresNIO

extension OperatorStore {
    /// The most recently parked events (rejected and dead), newest first, at most `limit`: served by
    /// `event_queue_parked_idx`.
    package func problemEvents(limit: Int = 50, logger: Logger) async throws -> [ProblemEvent] {
        let rows = try await client.rows(
            """
            SELECT p.event_id, p.state, p.reason, p.attempts, p.event_received_at, p.finished_at
            FROM (
                (SELECT event_id, event_received_at, state, reject_reason AS reason, attempts, finished_at
                 FROM event_queue WHERE state = 'rejected' ORDER BY finished_at DESC NULLS LAST LIMIT \(limit))
                UNION ALL
                (SELECT event_id, event_received_at, state, last_error, attempts, finished_at
                 FROM event_queue WHERE state = 'dead' ORDER BY finished_at DESC NULLS LAST LIMIT \(limit))
            ) p
            ORDER BY p.finished_at DESC NULLS LAST, p.event_id DESC
            LIMIT \(limit)
            """,
            logger: logger
        ).decode((Int64, String, String?, Int32, Date, Date?).self)
        return rows.map { ProblemEvent(id: $0.0, state: $0.1, reason: $0.2, attempts: Int($0.3), receivedAt: $0.4, finishedAt: $0.5) }
    }

    /// The verified notification `notificationUUID` as decoded and recorded, or nil.
    package func decodedNotification(_ notificationUUID: String, logger: Logger) async throws -> DecodedNotification? {
        guard
            let (uuid, type, subtype, environment, payload, transaction, renewal) = try await client.rows(
                """
                SELECT notification_uuid, notification_type, subtype, environment, jsonb_pretty(payload),
                       jsonb_pretty(transaction_payload), jsonb_pretty(renewal_payload)
                FROM notifications WHERE notification_uuid = \(notificationUUID)
                """,
                logger: logger
            ).decode((String, String?, String?, String?, String, String?, String?).self).first
        else { return nil }
        return DecodedNotification(
            notificationUUID: uuid, type: type, subtype: subtype, environment: environment, payload: payload, transaction: transaction,
            renewalInfo: renewal
        )
    }
}
