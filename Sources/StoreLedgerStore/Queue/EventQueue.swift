import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// The work queue over the event log: claim with `FOR UPDATE SKIP LOCKED` under a lease, complete
/// fenced by lease owner and attempt, retry with backoff, rescue expired leases.
package struct EventQueue: Sendable {
    /// The channel `NOTIFY`d when new work is enqueued.
    package static let notificationChannel = "storeledger_events"

    /// The Postgres client the queue runs on.
    package let client: PostgresClient
    /// How the claim reaches Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions

    /// Creates a queue over `client`, claiming as `sessions` allow (default: a direct connection).
    package init(client: PostgresClient, sessions: DatabaseSessions = DatabaseSessions()) {
        self.client = client
        self.sessions = sessions
    }

    /// Claims up to `limit` ready events for `owner` in one statement, leasing them for `lease`.
    ///
    /// Each claim counts as an attempt. Returns the events in log order.
    package func claim(limit: Int, owner: String, lease: Duration, logger: Logger) async throws -> [ClaimedEvent] {
        let leaseSeconds = Self.seconds(lease)
        // In a checked transaction like every write: a claim that did not commit is not handed to the handler. Bounded
        // on the server too (``TransactionLimits/claim(lease:)``): a worker that vanished between the claim and its
        // COMMIT must not leave the claimed rows locked (invisible to every other claim and rescue) until TCP notices.
        let limits = TransactionLimits.claim(lease: lease)
        let rows = try await client.inTransaction(logger: logger, sessions: sessions, limits: limits) { [sessions] connection in
            try await sessions.run(ClaimStatement(limit: Int64(limit), owner: owner, leaseSeconds: leaseSeconds), on: connection, logger: logger)
        }
        var events: [ClaimedEvent] = []
        events.reserveCapacity(rows.count)
        for (id, attempt, receivedAt, source, hint, body, requestID) in rows {
            events.append(
                ClaimedEvent(
                    id: EventID(id), attempt: Int(attempt), receivedAt: receivedAt,
                    source: EventSource(rawValue: source) ?? .appleNotification,
                    environmentHint: hint.flatMap(EnvironmentHint.init(rawValue:)),
                    body: body, requestID: requestID
                )
            )
        }
        return events
    }

    /// Records the outcomes of claimed events on `connection` (normally inside the transaction that
    /// also wrote their effects, opened with the same `sessions`), fenced by `owner` and each event's attempt.
    ///
    /// Retries are rescheduled by `policy`; a retry that exhausts it becomes `dead`; every failure is
    /// added to `event_attempt_errors`. Throws ``StoreError/Code/leaseLost`` when any event is no
    /// longer held by `owner` at that attempt, so the caller's transaction rolls back.
    package static func complete(
        _ results: [(event: ClaimedEvent, outcome: EventOutcome)],
        owner: String,
        policy: RetryPolicy,
        on connection: PostgresConnection,
        sessions: DatabaseSessions,
        logger: Logger
    ) async throws {
        guard !results.isEmpty else { return }
        var ids: [Int64] = []
        var attempts: [Int32] = []
        var states: [String] = []
        var errors: [String] = []
        var delays: [Double] = []
        for (event, outcome) in results {
            ids.append(event.id.rawValue)
            attempts.append(Int32(event.attempt))
            switch outcome {
            case .done:
                states.append(QueueState.done.rawValue)
                errors.append("")
                delays.append(0)
            case .reject(let reason):
                states.append(QueueState.rejected.rawValue)
                errors.append(Self.storable(reason))
                delays.append(0)
            case .retry(let reason):
                let exhausted = policy.isExhausted(afterAttempt: event.attempt)
                states.append(exhausted ? QueueState.dead.rawValue : QueueState.pending.rawValue)
                errors.append(Self.storable(reason))
                delays.append(exhausted ? 0 : policy.delay(afterAttempt: event.attempt))
            }
        }
        let finished =
            try await sessions.run(
                CompleteStatement(
                    ids: ids, attempts: attempts, states: states, errors: errors, delays: delays, owner: owner
                ),
                on: connection,
                logger: logger
            ).last.map(Int.init) ?? 0
        if finished != results.count {
            throw StoreError(
                .leaseLost,
                "\(results.count - finished) of \(results.count) events are no longer leased to \(owner)"
            )
        }
    }

    /// `reason` as the queue's text columns can hold it: a NUL, which PostgreSQL's `text` refuses (and with it the whole
    /// batch's completion), written as the escape `\u0000`. Reasons quote what was sent (a forged JWS header's `alg`),
    /// so anyone who can post a body could otherwise make every batch holding it fail.
    static func storable(_ reason: String) -> String {
        reason.contains("\u{0}") ? reason.replacingOccurrences(of: "\u{0}", with: "\\u0000") : reason
    }

    /// Extends to `lease` from now the leases `owner` still holds on `events` (each at its attempt: the same fence as a
    /// completion) and returns the ids it extended: what the caller may still process and complete. Like a claim, the
    /// transaction is bounded on the server by `lease`.
    package func renewLeases(_ events: [ClaimedEvent], owner: String, lease: Duration, logger: Logger) async throws -> Set<EventID> {
        guard !events.isEmpty else { return [] }
        let seconds = Self.seconds(lease)
        let renewed = try await client.inTransaction(logger: logger, limits: .claim(lease: lease)) { connection in
            try await connection.query(
                """
                UPDATE event_queue q
                SET lease_expires_at = now() + make_interval(secs => \(seconds)::float8), updated_at = now()
                FROM unnest(\(events.map(\.id.rawValue))::int8[], \(events.map { Int32($0.attempt) })::int4[]) AS r(event_id, attempt)
                WHERE q.event_id = r.event_id AND q.attempts = r.attempt AND q.lease_owner = \(owner)
                RETURNING q.event_id
                """,
                logger: logger
            ).decode(Int64.self).readToEnd()
        }
        return Set(renewed.map(EventID.init))
    }

    /// Hands back the events of `events` still leased to `owner` (each at its attempt) unprocessed: pending and available
    /// at once, without a backoff or a recorded error (a worker stopping, or giving up on a batch, before it started
    /// them). Their attempt stays counted, so a completion of that attempt still racing (a batch left behind at its
    /// deadline) finds no lease and rolls back. Like a claim, the transaction is bounded on the server by `lease`.
    package func release(_ events: [ClaimedEvent], owner: String, lease: Duration, logger: Logger) async throws {
        guard !events.isEmpty else { return }
        try await client.inTransaction(logger: logger, limits: .claim(lease: lease)) { connection in
            try await connection.query(
                """
                UPDATE event_queue q
                SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, available_at = now(), updated_at = now()
                FROM unnest(\(events.map(\.id.rawValue))::int8[], \(events.map { Int32($0.attempt) })::int4[]) AS r(event_id, attempt)
                WHERE q.event_id = r.event_id AND q.attempts = r.attempt AND q.lease_owner = \(owner)
                """,
                logger: logger
            ).readToEnd()
        }
    }

    /// `duration` in seconds, as the statements bind a lease.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Returns expired leases to `pending` (or `dead` when they used their last attempt) and
    /// returns how many it rescued. Any worker may call it; concurrent calls skip each other's rows. An expired lease is
    /// a failed attempt: the event waits out the policy's backoff, as after any failure, so a batch that cannot finish
    /// within its lease is not claimed again at once (the worker claims smaller batches meanwhile).
    /// Like a claim, the transaction is bounded on the server by `lease`.
    @discardableResult
    package func rescueExpiredLeases(policy: RetryPolicy, limit: Int = 1000, lease: Duration = .seconds(30), logger: Logger) async throws -> Int {
        let rescued = try await client.inTransaction(logger: logger, limits: .claim(lease: lease)) { connection in
            try await connection.query(
                """
                WITH expired AS (
                    SELECT event_id FROM event_queue
                    WHERE state = 'processing' AND lease_expires_at < now()
                    ORDER BY lease_expires_at
                    LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED
                ), rescued AS (
                    UPDATE event_queue q
                    SET state = CASE WHEN q.attempts >= \(policy.maximumAttempts) THEN 'dead' ELSE 'pending' END,
                        available_at = now() + make_interval(secs => least(power(greatest(q.attempts, 1), 4), \(policy.maximumDelay)::float8)
                            * (1 + \(policy.jitter)::float8 * (2 * random() - 1))),
                        lease_owner = NULL, lease_expires_at = NULL,
                        last_error = 'lease expired: held by ' || q.lease_owner,
                        finished_at = CASE WHEN q.attempts >= \(policy.maximumAttempts) THEN now() END,
                        updated_at = now()
                    FROM expired
                    WHERE q.event_id = expired.event_id
                    RETURNING q.event_id, q.attempts, q.last_error
                ), history AS (
                    INSERT INTO event_attempt_errors (event_id, attempt, worker, outcome, error)
                    SELECT event_id, attempts, NULL, 'lease_expired', last_error FROM rescued
                )
                SELECT count(*) FROM rescued
                """,
                logger: logger
            ).decode(Int.self).readToEnd().last ?? 0
        }
        if rescued > 0 { logger.warning("rescued expired leases", metadata: ["count": "\(rescued)"]) }
        return rescued
    }
}

extension EventQueue {
    /// Leases a just-appended event to `owner` inside the caller's transaction, for inline processing by the
    /// app-facing API: workers cannot see it before the commit, and its completion goes through the same fenced
    /// ``complete(_:owner:policy:on:sessions:logger:)`` as a claimed one.
    package static func leaseAppended(
        _ appended: AppendedEvent, _ event: NewEvent, owner: String, lease: Duration, on connection: PostgresConnection, logger: Logger
    ) async throws -> ClaimedEvent {
        let seconds = Double(lease.components.seconds)
        let rows = try await connection.query(
            """
            UPDATE event_queue
            SET state = 'processing', attempts = attempts + 1, lease_owner = \(owner),
                lease_expires_at = now() + make_interval(secs => \(seconds)::float8), updated_at = now()
            WHERE event_id = \(appended.id.rawValue) AND state = 'pending'
            RETURNING attempts
            """,
            logger: logger
        )
        if let attempt = try await rows.decode(Int32.self).firstAfterReadingAll() {
            return ClaimedEvent(
                id: appended.id, attempt: Int(attempt), receivedAt: appended.receivedAt, source: event.source,
                environmentHint: event.environmentHint, body: event.body, requestID: event.requestID
            )
        }
        throw StoreError(.leaseLost, "event \(appended.id) was not pending right after it was appended")
    }
}
