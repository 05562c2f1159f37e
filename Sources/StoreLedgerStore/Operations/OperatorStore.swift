package import Foundation
package import Logging
import NIOCore
package import PostgresNIO

/// The operator's view of the queue: statistics, one event's whole story, and putting parked or finished events
/// back to work (`stats`, `inspect`, `requeue`, `replay`). Every requeue and replay is recorded in
/// `operator_actions` with who asked and why.
package struct OperatorStore: Sendable {
    /// The longest reason an operator action records (the console's requeue and replay, and the CLI's).
    package static let maximumReasonLength = 1_000

    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// How many done events a queue may hold before their count is pg_class's estimate rather than a count: an exact
    /// count reads every done row, and the queue keeps them all.
    package static let exactDoneCountLimit = 100_000

    /// A snapshot of the queue. Every part reads an index (migrations 0002 and 0019) except the done count on a small
    /// queue, so the console's page and the workers' metrics stay fast however much history the queue holds.
    package func statistics(logger: Logger) async throws -> QueueStatistics {
        var depth = Dictionary(uniqueKeysWithValues: QueueState.allCases.map { ($0.rawValue, 0) })
        var finished = 0
        var received = 0
        var estimatedRows: Int?
        // One round trip: the unfinished states by their partial indexes, the last minute by the time indexes, and the
        // planner's row estimate of the whole table (-1 before the first ANALYZE).
        for (pending, processing, rejected, dead, done, arrived, estimate) in try await client.rows(
            """
            SELECT (SELECT count(*) FROM event_queue WHERE state = 'pending'),
                   (SELECT count(*) FROM event_queue WHERE state = 'processing'),
                   (SELECT count(*) FROM event_queue WHERE state = 'rejected'),
                   (SELECT count(*) FROM event_queue WHERE state = 'dead'),
                   (SELECT count(*) FROM event_queue WHERE finished_at > now() - interval '1 minute'),
                   (SELECT count(*) FROM event_queue WHERE enqueued_at > now() - interval '1 minute'),
                   (SELECT reltuples::int8 FROM pg_class WHERE oid = 'event_queue'::regclass)
            """,
            logger: logger
        ).decode((Int, Int, Int, Int, Int, Int, Int).self) {
            depth["pending"] = pending
            depth["processing"] = processing
            depth["rejected"] = rejected
            depth["dead"] = dead
            finished = done
            received = arrived
            estimatedRows = estimate
        }
        let unfinished = depth.values.reduce(0, +)
        var doneIsEstimated = false
        if let estimatedRows, estimatedRows - unfinished > Self.exactDoneCountLimit {
            depth["done"] = estimatedRows - unfinished
            doneIsEstimated = true
        } else {
            for count in try await client.rows("SELECT count(*) FROM event_queue WHERE state = 'done'", logger: logger)
                .decode(Int.self)
            { depth["done"] = count }
        }
        var oldest: Double?
        var oldestRequeued: Double?
        var oldestUnfinished: Double?
        var notifyQueueUsage = 0.0
        // One round trip: notifications from their enqueue; requeued events (claimed only when notifications leave room)
        // from the requeue; notifications not finished whatever their available_at (a retry's backoff hides a failing
        // event from the first), each state's rows through its partial index; and the server's NOTIFY queue.
        for (live, requeued, unfinished, usage) in try await client.rows(
            """
            SELECT extract(epoch FROM now() - min(enqueued_at) FILTER (WHERE requeued_at IS NULL))::float8,
                   extract(epoch FROM now() - min(requeued_at))::float8,
                   extract(epoch FROM now() - least(
                       (SELECT min(enqueued_at) FROM event_queue WHERE state = 'pending' AND requeued_at IS NULL),
                       (SELECT min(enqueued_at) FROM event_queue WHERE state = 'processing' AND requeued_at IS NULL)))::float8,
                   pg_notification_queue_usage()
            FROM event_queue
            WHERE state = 'pending' AND available_at <= now()
            """,
            logger: logger
        ).decode((Double?, Double?, Double?, Double).self) {
            (oldest, oldestRequeued, oldestUnfinished, notifyQueueUsage) = (live, requeued, unfinished, usage)
        }
        return QueueStatistics(
            depth: depth, doneIsEstimated: doneIsEstimated, oldestPendingAgeSeconds: oldest, oldestRequeuedAgeSeconds: oldestRequeued,
            oldestUnfinishedAgeSeconds: oldestUnfinished, notifyQueueUsage: notifyQueueUsage,
            finishedLastMinute: finished,
            receivedLastMinute: received,
            rejectedByReason: try await classes(column: .rejectReason, state: "rejected", logger: logger),
            deadByError: try await classes(column: .lastError, state: "dead", logger: logger)
        )
    }

    /// The column whose text before the first `:` classifies parked events.
    private enum ReasonColumn {
        case rejectReason, lastError
    }

    /// How many events in `state` have each class of `column` (`(none)` for an empty one).
    private func classes(column: ReasonColumn, state: String, logger: Logger) async throws -> [String: Int] {
        let query: PostgresQuery =
            switch column {
            case .rejectReason:
                """
                SELECT coalesce(nullif(split_part(reject_reason, ':', 1), ''), '(none)'), count(*)
                FROM event_queue WHERE state = \(state) GROUP BY 1
                """
            case .lastError:
                """
                SELECT coalesce(nullif(split_part(last_error, ':', 1), ''), '(none)'), count(*)
                FROM event_queue WHERE state = \(state) GROUP BY 1
                """
            }
        var result: [String: Int] = [:]
        for (reason, count) in try await client.rows(query, logger: logger).decode((String, Int).self) { result[reason] = count }
        return result
    }

    /// Everything known about event `id`, or nil when there is no such event: from the log and the queue, either of
    /// which may have lost its half (a month of the log detached for archiving keeps its queue rows; finished queue
    /// rows may be pruned), so that an event is never reported missing while either knows it.
    package func inspect(_ id: Int64, logger: Logger) async throws -> EventInspection? {
        var inspection: EventInspection?
        let rows = try await client.rows(
            """
            SELECT coalesce(e.id, q.event_id), coalesce(e.received_at, q.event_received_at), e.source, e.environment_hint, e.route,
                   e.body, e.request_id, e.user_id, q.state, coalesce(q.attempts, 0), q.reject_reason, q.last_error, q.finished_at,
                   (SELECT notification_uuid FROM notification_deliveries d WHERE d.event_id = \(id))
            FROM (SELECT * FROM events WHERE id = \(id)) e
            FULL JOIN (SELECT * FROM event_queue WHERE event_id = \(id)) q ON q.event_id = e.id
            """,
            logger: logger
        )
        for row in rows {
            let c = row.makeRandomAccess()
            inspection = EventInspection(
                id: try c[0].decode(Int64.self), receivedAt: try c[1].decode(Date.self), source: try c[2].decode(String?.self),
                environmentHint: try c[3].decode(String?.self), route: try c[4].decode(String?.self), body: try c[5].decode(ByteBuffer?.self),
                requestID: try c[6].decode(String?.self), userID: try c[7].decode(String?.self), state: try c[8].decode(String?.self),
                attempts: Int(try c[9].decode(Int32.self)), rejectReason: try c[10].decode(String?.self), lastError: try c[11].decode(String?.self),
                finishedAt: try c[12].decode(Date?.self), notificationUUID: try c[13].decode(String?.self), failures: [], actions: []
            )
        }
        guard var found = inspection else { return nil }
        for (attempt, at, worker, outcome, error) in try await client.rows(
            "SELECT attempt, failed_at, worker, outcome, error FROM event_attempt_errors WHERE event_id = \(id) ORDER BY id", logger: logger
        ).decode((Int32, Date, String?, String, String).self) {
            found.failures.append(.init(attempt: Int(attempt), failedAt: at, worker: worker, outcome: outcome, error: error))
        }
        for (action, previous, by, reason, at) in try await client.rows(
            "SELECT action, previous_state, requested_by, reason, performed_at FROM operator_actions WHERE event_id = \(id) ORDER BY id",
            logger: logger
        ).decode((String, String, String, String, Date).self) {
            found.actions.append(.init(action: action, previousState: previous, requestedBy: by, reason: reason, performedAt: at))
        }
        return found
    }

    /// Which events to put back to work.
    package enum Selection: Sendable {
        /// Every dead event.
        case dead
        /// Rejected events whose reason starts with `prefix` (`""` for all rejected).
        case rejected(reasonPrefix: String)
        /// These events, whatever their finished state.
        case ids([Int64])
        /// Every finished event with an id in the range (a replay).
        case idRange(ClosedRange<Int64>)
        /// Every finished event received in the interval (a replay).
        case receivedBetween(Date, Date)
    }

    /// Makes the selected finished events (done, rejected, dead) pending again with a fresh attempt budget, and
    /// records the action, who asked and why, per event. Events being processed are left alone. Returns how many.
    ///
    /// Safe to run at any time: the handler is idempotent (facts are recorded once, and only facts new to the ledger
    /// project), so a replayed event changes the ledger only when it now verifies where it did not (a verification
    /// fix, corrected trust); a projection fix needs a rebuild, which refolds every row.
    @discardableResult
    package func requeue(
        _ selection: Selection, action: String = "requeue", by operatorName: String, reason: String, logger: Logger
    ) async throws -> Int {
        let query = Self.requeueStatement(selection, action: action, by: operatorName, reason: reason)
        let count = try await client.inTransaction(logger: logger) { connection in
            let count = try await connection.query(query, logger: logger).decode(Int.self).readToEnd().last ?? 0
            // Delivered to listeners at commit, with the rows.
            if count > 0 { try await connection.query("SELECT pg_notify(\(EventQueue.notificationChannel), '')", logger: logger).readToEnd() }
            return count
        }
        if count > 0 {
            logger.notice("events requeued", metadata: ["count": "\(count)", "action": "\(action)", "by": "\(operatorName)", "reason": "\(reason)"])
        }
        return count
    }

    /// The requeue statement for `selection`: one statement whatever the selection, its values interpolated as binds
    /// like every other statement's; only the selection's predicate differs, so each keeps its index.
    static func requeueStatement(_ selection: Selection, action: String, by operatorName: String, reason: String) -> PostgresQuery {
        var sql = PostgresQuery.StringInterpolation(literalCapacity: 1024, interpolationCount: 5)
        sql.appendLiteral("WITH selected AS (\n    SELECT q.event_id, q.state FROM event_queue q WHERE ")
        switch selection {
        case .dead:
            sql.appendLiteral("q.state = 'dead'")
        case .rejected(let prefix):
            sql.appendLiteral("q.state = 'rejected' AND starts_with(coalesce(q.reject_reason, ''), ")
            sql.appendInterpolation(prefix)
            sql.appendLiteral(")")
        case .ids(let ids):
            sql.appendLiteral("q.state IN ('done', 'rejected', 'dead') AND q.event_id = ANY(")
            sql.appendInterpolation(ids)
            sql.appendLiteral("::int8[])")
        case .idRange(let range):
            sql.appendLiteral("q.state IN ('done', 'rejected', 'dead') AND q.event_id BETWEEN ")
            sql.appendInterpolation(range.lowerBound)
            sql.appendLiteral(" AND ")
            sql.appendInterpolation(range.upperBound)
        case .receivedBetween(let from, let to):
            sql.appendLiteral("q.state IN ('done', 'rejected', 'dead') AND q.event_received_at >= ")
            sql.appendInterpolation(from)
            sql.appendLiteral(" AND q.event_received_at < ")
            sql.appendInterpolation(to)
        }
        // An event whose month was detached for archiving has no body to process: it is never requeued.
        sql.appendLiteral(
            """
             AND EXISTS (SELECT 1 FROM events e WHERE e.id = q.event_id AND e.received_at = q.event_received_at)
             FOR UPDATE SKIP LOCKED
            ), requeued AS (
                UPDATE event_queue q
                SET state = 'pending', attempts = 0, available_at = now(), reject_reason = NULL,
                    finished_at = NULL, updated_at = now(), requeued_at = now()
                FROM selected WHERE q.event_id = selected.event_id
                RETURNING q.event_id, selected.state AS previous_state
            ), recorded AS (
                INSERT INTO operator_actions (action, event_id, previous_state, requested_by, reason)
                SELECT
            """
        )
        sql.appendLiteral(" ")
        sql.appendInterpolation(action)
        sql.appendLiteral(", event_id, previous_state, ")
        sql.appendInterpolation(operatorName)
        sql.appendLiteral(", ")
        sql.appendInterpolation(reason)
        sql.appendLiteral(" FROM requeued\n)\nSELECT count(*) FROM requeued")
        return PostgresQuery(stringInterpolation: sql)
    }
}
