import Foundation
package import Logging
import PostgresNIO

extension WebhookEndpoints {
    /// The deliveries of the `limit` most recent webhook events, newest first: served by `webhook_events_created_idx`
    /// and the deliveries' primary key.
    package func recentDeliveries(limit: Int = 50, logger: Logger) async throws -> [WebhookDeliveryRecord] {
        let rows = try await client.rows(
            """
            SELECT e.id, e.type, e.original_transaction_id, p.url, d.state, d.attempts, d.last_status, d.last_error,
                   e.created_at, d.delivered_at, d.next_attempt_at
            FROM (SELECT id, type, original_transaction_id, created_at FROM webhook_events ORDER BY created_at DESC, id LIMIT \(limit)) e
            JOIN webhook_deliveries d ON d.event_id = e.id
            JOIN webhook_endpoints p ON p.id = d.endpoint_id
            ORDER BY e.created_at DESC, e.id, p.id
            """,
            logger: logger
        ).decode((UUID, String, String, String, String, Int32, Int32?, String?, Date, Date?, Date).self)
        return rows.map {
            WebhookDeliveryRecord(
                eventID: $0.0, type: $0.1, originalTransactionID: $0.2, url: $0.3, state: $0.4, attempts: Int($0.5),
                lastStatus: $0.6.map(Int.init), lastError: $0.7, createdAt: $0.8, deliveredAt: $0.9, nextAttemptAt: $0.10
            )
        }
    }
}
