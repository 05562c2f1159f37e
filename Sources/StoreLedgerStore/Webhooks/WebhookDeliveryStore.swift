package import Foundation
package import Logging
package import PostgresNIO

/// The outgoing-webhook delivery queue (`webhook_deliveries`, `webhook_delivery_attempts`): claim due deliveries
/// under a lease and record each attempt's outcome. The dispatcher in the worker does the HTTP; every statement is here.
package struct WebhookDeliveryStore: Sendable {
    /// One due delivery, claimed: what to POST where, signed with which secret.
    package struct Due: Sendable {
        /// The webhook event's id (sent as `StoreLedger-Event-Id`).
        package let eventID: UUID
        /// The endpoint it goes to.
        package let endpointID: Int64
        /// This attempt's number (1-based).
        package let attempt: Int
        /// The endpoint's URL.
        package let url: String
        /// The endpoint's signing secret.
        package let secret: String
        /// The secret a rotation replaced, while it still signs beside `secret`.
        package let previousSecret: String?
        /// The JSON body.
        package let body: Data
        /// The event type (sent as `StoreLedger-Event-Type`).
        package let type: String
    }

    /// The outcome of one attempt.
    package enum Outcome: String, Sendable {
        /// A 2xx answer: done.
        case delivered
        /// Failed; tried again later.
        case pending
        /// Failed for the last time.
        case failed
    }

    /// The database.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Claims up to `limit` due deliveries, the oldest due first, at most `perEndpoint` of any one endpoint and none of
    /// the endpoints in `excluding` (a dispatcher's endpoints already at their share in flight: one that hangs must not
    /// take every slot), counting the attempt and making them due again after `leaseSeconds` (so a dispatcher that dies
    /// mid-POST does not lose them). Commits before returning. First ends as `failed` ("endpoint removed") any due
    /// delivery still pending for a removed endpoint (through the index of due deliveries): one enqueued by a
    /// projection that committed just after the removal, which the removal could not see.
    package func claimDue(
        limit: Int, perEndpoint: Int = Int(Int32.max), excluding: [Int64] = [], leaseSeconds: Double, logger: Logger
    ) async throws -> [Due] {
        // Bounded on the server by the lease, as the event queue's claim: a dispatcher cut off before its COMMIT must
        // not keep the claimed deliveries locked until TCP notices.
        let limits = TransactionLimits.claim(lease: .milliseconds(Int64(leaseSeconds * 1000)))
        let rows = try await client.inTransaction(logger: logger, limits: limits) { connection in
            try await connection.query(
                """
                UPDATE webhook_deliveries d SET state = 'failed', last_error = \(Self.endpointRemoved), last_status = NULL
                FROM webhook_endpoints e
                WHERE e.id = d.endpoint_id AND NOT e.active AND d.state = 'pending' AND d.next_attempt_at <= now()
                """,
                logger: logger
            ).readToEnd()
            return try await connection.query(
                """
                WITH claimed AS (
                    SELECT due.event_id, due.endpoint_id
                    FROM webhook_endpoints e
                    CROSS JOIN LATERAL (
                        SELECT d.event_id, d.endpoint_id, d.next_attempt_at FROM webhook_deliveries d
                        WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.next_attempt_at <= now()
                        ORDER BY d.next_attempt_at LIMIT \(Int32(clamping: min(perEndpoint, limit)))
                        FOR UPDATE SKIP LOCKED
                    ) due
                    WHERE e.active AND e.id <> ALL(\(excluding)::int8[])
                    ORDER BY due.next_attempt_at LIMIT \(Int32(clamping: limit))
                )
                UPDATE webhook_deliveries d
                SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => \(leaseSeconds)::float8)
                FROM claimed, webhook_events ev, webhook_endpoints ep
                WHERE d.event_id = claimed.event_id AND d.endpoint_id = claimed.endpoint_id AND ev.id = d.event_id AND ep.id = d.endpoint_id
                  AND ep.active
                RETURNING d.event_id, d.endpoint_id, d.attempts, ep.url, ep.secret,
                          CASE WHEN ep.previous_secret_expires_at > now() THEN ep.previous_secret END,
                          (ev.payload || jsonb_build_object('user_id', ev.user_id))::text, ev.type
                """,
                logger: logger
            ).decode((UUID, Int64, Int32, String, String, String?, String, String).self).readToEnd()
        }
        return rows.map { eventID, endpointID, attempt, url, secret, previousSecret, body, type in
            Due(
                eventID: eventID, endpointID: endpointID, attempt: Int(attempt), url: url, secret: secret, previousSecret: previousSecret,
                body: Data(body.utf8), type: type)
        }
    }

    /// What a delivery that ended because its endpoint was removed says in `last_error`.
    package static let endpointRemoved = "endpoint removed"

    /// Records an attempt's outcome (fenced by the attempt number, so a stale dispatcher cannot overwrite a newer one,
    /// and by the state: an attempt that failed after its endpoint's removal ended the delivery leaves it ended) and its
    /// row in the attempt log; `retryAfterSeconds` schedules the next attempt of a `pending` one.
    package func record(
        _ delivery: Due, outcome: Outcome, status: Int?, error: String?, milliseconds: Double, retryAfterSeconds: Double, logger: Logger
    ) async throws {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                WITH updated AS (
                    UPDATE webhook_deliveries
                    SET state = \(outcome.rawValue), last_status = \(status.map(Int32.init)), last_error = \(error),
                        delivered_at = CASE WHEN \(outcome.rawValue) = 'delivered' THEN now() END,
                        next_attempt_at = now() + make_interval(secs => \(retryAfterSeconds)::float8)
                    WHERE event_id = \(delivery.eventID) AND endpoint_id = \(delivery.endpointID) AND attempts = \(Int32(delivery.attempt))
                      AND (state = 'pending' OR \(outcome.rawValue) = 'delivered')
                )
                INSERT INTO webhook_delivery_attempts (event_id, endpoint_id, attempt, status_code, error, duration_ms)
                VALUES (\(delivery.eventID), \(delivery.endpointID), \(Int32(delivery.attempt)), \(status.map(Int32.init)), \(error), \(milliseconds))
                """,
                logger: logger
            ).readToEnd()
        }
    }

    /// Deletes up to `limit` deliveries that finished (delivered, or failed for good) more than `days` days ago, with
    /// their attempts, in one transaction; returns how many deliveries it deleted.
    package func pruneFinished(olderThanDays days: Int, limit: Int, logger: Logger) async throws -> Int {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                WITH old AS (
                    SELECT event_id, endpoint_id FROM webhook_deliveries
                    WHERE state IN ('delivered', 'failed')
                      AND coalesce(delivered_at, next_attempt_at) < now() - make_interval(days => \(Int32(days)))
                    LIMIT \(Int32(limit))
                    FOR UPDATE SKIP LOCKED
                ), gone AS (
                    DELETE FROM webhook_deliveries d USING old
                    WHERE d.event_id = old.event_id AND d.endpoint_id = old.endpoint_id
                    RETURNING d.event_id, d.endpoint_id
                ), attempts AS (
                    DELETE FROM webhook_delivery_attempts a USING gone
                    WHERE a.event_id = gone.event_id AND a.endpoint_id = gone.endpoint_id
                )
                SELECT count(*) FROM gone
                """,
                logger: logger
            ).decode(Int.self).firstAfterReadingAll() ?? 0
        }
    }
}
