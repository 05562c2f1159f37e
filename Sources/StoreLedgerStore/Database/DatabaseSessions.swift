package import Logging
package import PostgresNIO
import Synchronization

/// How one process's statements reach Postgres: the pooler in front of it (`DATABASE_POOLER`) and which of its
/// connections already run with `plan_cache_mode = force_generic_plan`.
///
/// Built once per process from its configuration and handed to what runs the hot statements (``EventLog``,
/// ``EventQueue``, the worker, the inline processor, reconciliation); nothing reads a process-global.
///
/// Where sessions are kept whole (``DatabasePooler/keepsSessions``) the append, claim and completion are named
/// prepared statements, planned once per connection, and a connection sets `plan_cache_mode = force_generic_plan`
/// for its session before its first transaction that runs one (``prepare(_:logger:)``, outside the transaction, so
/// that a rollback cannot undo it). The setting used to be a startup parameter, which PgBouncer refuses
/// (`unsupported startup parameter: plan_cache_mode`), and PostgresNIO has no hook for a new connection. Connections
/// are held weakly: a closed connection drops out, and a new one at the same address is not mistaken for it. A
/// connection whose first use of a named statement fails sends that statement unnamed from then on (PostgresNIO would
/// answer every later use with a failed preparation's error, without asking the server). Behind
/// a transaction pooler nothing is set (a session `SET` would land on whichever server session the statement
/// happened to get, and stay there for other clients) and the statements go unnamed.
package final class DatabaseSessions: Sendable {
    /// What sits between this process and Postgres.
    package let pooler: DatabasePooler

    /// Whether ``prepare(_:logger:)`` makes the session's commits durable, so that a transaction on a prepared
    /// connection needs no statement of its own for it: where sessions are kept whole.
    package var makesSessionsDurable: Bool { pooler.keepsSessions }

    private struct Entry {
        weak var connection: PostgresConnection?
        /// The named statements known prepared on it (one has answered once).
        var prepared: Set<String> = []
        /// The statements whose first use on it failed, sent unnamed from then on.
        var unnamed: Set<String> = []
    }

    /// Records `name` in the set `field` of `connection`'s entry (made by ``prepare(_:logger:)``).
    private func remember(_ name: String, on connection: PostgresConnection, _ field: WritableKeyPath<Entry, Set<String>>) {
        let key = ObjectIdentifier(connection)
        entries.withLock { entries in
            if entries[key]?.connection === connection { entries[key]?[keyPath: field].insert(name) }
        }
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// Sessions behind `pooler` (default: a direct connection).
    package init(pooler: DatabasePooler = .direct) {
        self.pooler = pooler
    }

    /// Outside a transaction, before a connection's first one: checks the database's history
    /// (`storeledger_check_history`, as a session's first event id or webhook number would: migrations 0011 and 0032) in
    /// a statement of its own, so that a change noticed after a failover is recorded in a transaction that ends at once,
    /// not inside a worker's batch whose history lock would hold every receiver's first append until the batch ends;
    /// where sessions are kept whole, also sets `plan_cache_mode = force_generic_plan`, sets `synchronous_commit` for the
    /// session (`off` turned `on`, any other value kept, and pinned against a reload of the server's configuration:
    /// every commit of the session durable) and marks the session checked, once per connection (a failover ends the
    /// session).
    ///
    /// Behind a transaction pooler nothing is set on the session (it is anyone's), and the check runs before every
    /// transaction, not once per connection: the pooler keeps this process's connection open across a failover of the
    /// server behind it, so a check remembered per connection would never run against the new primary, and the first
    /// batch's own check would take the lock inside the batch. It costs one short statement per transaction there
    /// (the control file and the last `database_history` row read, no lock, when nothing changed).
    package func prepare(_ connection: PostgresConnection, logger: Logger) async throws {
        guard pooler.keepsSessions else {
            try await connection.query("SELECT storeledger_check_history()", logger: logger).readToEnd()
            return
        }
        let key = ObjectIdentifier(connection)
        let known = entries.withLock { $0[key]?.connection === connection }
        if known { return }
        // Named statements are planned once per connection; their generic plans are index-driven whatever the
        // batch (see ClaimStatement, CompleteStatement), while custom plans would be made on every call.
        // The check and the mark written out, not storeledger_check_history_once (0032): appends also run on a
        // database at an older schema while it is being upgraded (migration tests do), and 0011's check is there.
        // The session's commits made durable too (``TransactionLimits/durableCommit``), once here rather than by a
        // statement in each transaction: the setting pinned for the session whatever it is, so that a later
        // `ALTER SYSTEM … synchronous_commit = off` and a reload (which change every session that set nothing) cannot
        // turn this long-lived connection's commits asynchronous.
        try await connection.query(
            """
            SELECT set_config('plan_cache_mode', 'force_generic_plan', false), storeledger_check_history(),
                   set_config('storeledger.history_checked', 'on', false),
                   set_config('synchronous_commit',
                              CASE current_setting('synchronous_commit') WHEN 'off' THEN 'on' ELSE current_setting('synchronous_commit') END,
                              false)
            """, logger: logger
        ).readToEnd()
        entries.withLock { entries in
            entries = entries.filter { $0.value.connection != nil }
            entries[key] = Entry(connection: connection)
        }
    }

    /// Runs one of the hot statements (the append, the claim, the completion) on `connection` and reads its rows to
    /// the end, so an error that follows the rows is thrown here. Callers run it inside
    /// ``PostgresNIO/PostgresClient/inTransaction(logger:sessions:isolation:_:)``, whose checked `COMMIT` is what
    /// makes its effects count.
    ///
    /// This is the one place that chooses how they reach the server: where sessions are kept whole, as the named
    /// prepared statement `Statement.name` (parsed once per connection; its session runs with generic plans); behind
    /// a transaction pooler, as an unnamed extended-protocol statement with the same SQL and binds, parsed and
    /// planned on each call (PgBouncer before 1.21 cannot carry a named statement from one transaction to the next,
    /// and a custom plan of these statements is the generic one's shape: docs/operations.md#pgbouncer).
    func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Statement.Row] {
        if pooler.keepsSessions {
            try await prepare(connection, logger: logger)
            let key = ObjectIdentifier(connection)
            let known = entries.withLock { entries -> (prepared: Bool, unnamed: Bool) in
                guard let entry = entries[key], entry.connection === connection else { return (false, false) }
                return (entry.prepared.contains(Statement.name), entry.unnamed.contains(Statement.name))
            }
            if !known.unnamed {
                do {
                    let rows = try await connection.execute(statement, logger: logger).readToEnd()
                    if !known.prepared { remember(Statement.name, on: connection, \.prepared) }
                    return rows
                } catch {
                    // PostgresNIO keeps a failed preparation for the connection's life and answers every later use of
                    // the statement with that error, without asking the server: a first `Parse` that a lock or
                    // statement timeout, a cancel or a missing relation failed would fail this statement on this pooled
                    // connection for good (and the pool hands out its first free connection, the same one again and
                    // again). Whether the preparation or the execution failed cannot be told apart here, so after a
                    // failed first use the connection sends the statement unnamed (as behind a transaction pooler).
                    if !known.prepared {
                        remember(Statement.name, on: connection, \.unnamed)
                        logger.notice(
                            "a named statement failed on its first use; this connection sends it unnamed from now on",
                            metadata: ["statement": "\(Statement.name)", "error": "\(String(reflecting: error))"])
                    }
                    throw error
                }
            }
        }
        let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
        return try await connection.query(query, logger: logger).map { try statement.decodeRow($0) }.readToEnd()
    }
}
