import PostgresNIO

/// Recording outcomes (a named prepared statement, or the same SQL unnamed behind a transaction pooler: see
/// ``DatabaseSessions/run(_:on:logger:)``): one row per event in five parallel arrays
/// (`$1` ids, `$2` attempts, `$3` new states, `$4` errors, `$5` retry delays in seconds) and the lease owner `$6`.
///
/// Only rows still leased to `$6` at the same attempt change (the fence; the table's CHECK makes a lease owner
/// imply `processing`, and leaving `state` out of the condition keeps the partial lease index out of the plan,
/// which then looks each outcome up by primary key); failures are added to `event_attempt_errors`. Returns how
/// many rows changed.
struct CompleteStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_complete_v1"

    /// The statement.
    static let sql = """
        WITH outcome AS (
            SELECT * FROM unnest($1::int8[], $2::int4[], $3::text[], $4::text[], $5::float8[])
                AS o(event_id, attempt, state, error, delay)
        ), finished AS (
            UPDATE event_queue q
            SET state = o.state,
                available_at = CASE WHEN o.state = 'pending' THEN now() + make_interval(secs => o.delay) ELSE q.available_at END,
                lease_owner = NULL, lease_expires_at = NULL,
                last_error = CASE WHEN o.state IN ('pending', 'dead') THEN o.error ELSE q.last_error END,
                reject_reason = CASE WHEN o.state = 'rejected' THEN o.error ELSE q.reject_reason END,
                finished_at = CASE WHEN o.state IN ('done', 'rejected', 'dead') THEN now() END,
                updated_at = now()
            FROM outcome o
            WHERE q.event_id = o.event_id AND q.lease_owner = $6 AND q.attempts = o.attempt
            RETURNING q.event_id, q.attempts, o.state, o.error
        ), history AS (
            INSERT INTO event_attempt_errors (event_id, attempt, worker, outcome, error)
            SELECT event_id, attempts, $6,
                   CASE state WHEN 'pending' THEN 'retry' ELSE state END, error
            FROM finished WHERE state <> 'done'
        )
        SELECT count(*) FROM finished
        """

    /// How many rows changed.
    typealias Row = Int64

    /// Event ids.
    let ids: [Int64]
    /// The attempt each outcome belongs to.
    let attempts: [Int32]
    /// The state each event moves to.
    let states: [String]
    /// The reason kept with a retry, rejection or death ("" for done).
    let errors: [String]
    /// Seconds until a retry is due (0 otherwise).
    let delays: [Double]
    /// The lease owner completing them.
    let owner: String

    /// `$1`…`$6`.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(ids)
        bindings.append(attempts)
        bindings.append(states)
        bindings.append(errors)
        bindings.append(delays)
        bindings.append(owner)
        return bindings
    }

    /// Decodes the count.
    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Int64.self)
    }
}
