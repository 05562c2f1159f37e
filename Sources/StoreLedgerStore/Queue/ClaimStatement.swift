import Foundation
import NIOCore
import PostgresNIO

/// The claim: a named prepared statement that every connection plans once, not on every batch, or the same SQL
/// unnamed behind a transaction pooler (``DatabaseSessions/run(_:on:logger:)`` chooses).
///
/// Takes up to `$1` ready events in available-time order with `FOR UPDATE SKIP LOCKED` (so concurrent claimers
/// never wait for or share a row), leases them to `$2` for `$3` seconds, counts the attempt, and returns them
/// with their raw bodies in log order. Events never requeued come first; those an operator requeued or replayed
/// (`requeued_at` set) only fill what remains of the batch, so what Apple sends now waits at most for the batches
/// already claimed, never for a replay's backlog. While a rebuild's swap holds the live tables (``ShadowSchema/swapLockKey``,
/// exclusively) it takes nothing: a batch claimed then would wait for the swap to end, past its lease perhaps, and
/// every claim after it would too, each holding a connection and spending an attempt.
struct ClaimStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_claim_v3"

    /// The statement.
    /// The ids come from an `ARRAY(...)` sub-select so that the plan, prepared once without knowing `$1`, is
    /// index-driven (the ready indexes, then the primary keys, then each event's partition by primary key) rather
    /// than a hash join sized for an unknown LIMIT. Each kind of event is its own locking scan (`FOR UPDATE` is not
    /// allowed in a `UNION`'s arms, and a CTE's scan runs only as far as it is read): the requeued scan runs only when
    /// the live one left room.
    static let sql = """
        WITH claimed AS (
            UPDATE event_queue q
            SET state = 'processing', attempts = q.attempts + 1, lease_owner = $2,
                lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
            WHERE q.event_id = ANY (ARRAY(
                WITH live AS (
                    SELECT event_id FROM event_queue
                    WHERE state = 'pending' AND requeued_at IS NULL AND available_at <= now()
                      AND (SELECT pg_try_advisory_xact_lock_shared(\(ShadowSchema.swapLockKey)))
                    ORDER BY available_at, event_id
                    LIMIT $1
                    FOR UPDATE SKIP LOCKED
                ), requeued AS (
                    SELECT event_id FROM event_queue
                    WHERE state = 'pending' AND requeued_at IS NOT NULL AND available_at <= now()
                      AND (SELECT pg_try_advisory_xact_lock_shared(\(ShadowSchema.swapLockKey)))
                    ORDER BY available_at, event_id
                    LIMIT $1
                    FOR UPDATE SKIP LOCKED
                )
                SELECT event_id FROM live UNION ALL SELECT event_id FROM requeued
                LIMIT $1
            ))
            RETURNING q.event_id, q.event_received_at, q.attempts
        )
        SELECT c.event_id, c.attempts, e.received_at, e.source, e.environment_hint, e.body, e.request_id
        FROM claimed c
        JOIN events e ON e.id = c.event_id AND e.received_at = c.event_received_at
        ORDER BY c.event_id
        """

    /// Event id, attempt, received time, source, environment hint, body, request id.
    typealias Row = (Int64, Int32, Date, String, String?, ByteBuffer, String?)

    /// The parameter types: bigint, text, float8.
    static let bindingDataTypes: [PostgresDataType] = [.int8, .text, .float8]

    /// How many events at most.
    let limit: Int64
    /// Who takes the lease.
    let owner: String
    /// The lease, in seconds.
    let leaseSeconds: Double

    /// `$1`…`$3`.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 3)
        bindings.append(limit)
        bindings.append(owner)
        bindings.append(leaseSeconds)
        return bindings
    }

    /// Decodes one claimed row, its body copied out of the connection's read buffer (``NIOCore/ByteBuffer/inOwnStorage()``).
    func decodeRow(_ row: PostgresRow) throws -> Row {
        let (id, attempt, receivedAt, source, hint, body, requestID) = try row.decode(Row.self)
        return (id, attempt, receivedAt, source, hint, body.inOwnStorage(), requestID)
    }
}
