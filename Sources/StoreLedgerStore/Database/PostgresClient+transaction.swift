package import Logging
package import PostgresNIO

extension PostgresClient {
    /// Runs `body` in a transaction on one pooled connection and returns only once the database has committed it.
    ///
    /// Every write whose success is reported to anyone (an acknowledgement to Apple, an answer to an app, a finished
    /// queue row, an operator's action) goes through here. An autocommitted statement is not enough: in the extended
    /// protocol its implicit transaction commits at `Sync`, *after* the statement's rows and its CommandComplete were
    /// sent, so a failing commit (a deferred constraint, a crash before the WAL flush) is invisible to its caller.
    /// An explicit `COMMIT` answers only after the commit is durable (the transaction flushes its WAL before answering
    /// even where `synchronous_commit` is `off`: ``TransactionLimits/durableCommit``), and says `ROLLBACK` when an
    /// earlier statement failed; anything but `COMMIT` throws ``StoreError/Code/notCommitted``. The body's own error is rethrown
    /// unwrapped after a rollback, so callers can match on it. A transaction that runs hot statements passes the
    /// process's `sessions`, which prepares the connection's session first (``DatabaseSessions/prepare(_:logger:)``);
    /// one that takes row locks passes `limits`, which the server enforces (``TransactionLimits``): a transaction its
    /// caller gave up on (a deadline passed) ends within them, and frees its locks, whatever the caller does.
    ///
    /// The connection is leased with ``withOpenConnection(logger:isolation:_:)``: not one the server had closed.
    @discardableResult
    package func inTransaction<Result>(
        logger: Logger,
        sessions: DatabaseSessions? = nil,
        limits: TransactionLimits? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        try await withOpenConnection(logger: logger, isolation: isolation) { connection in
            try await connection.inTransaction(logger: logger, sessions: sessions, limits: limits, isolation: isolation, body)
        }
    }
}

extension PostgresConnection {
    /// Runs `body` between `BEGIN` and a `COMMIT` whose command tag is checked; see
    /// ``PostgresNIO/PostgresClient/inTransaction(logger:sessions:limits:isolation:_:)``. With `sessions` (a
    /// transaction that runs hot statements), the connection is prepared first (``DatabaseSessions/prepare(_:logger:)``:
    /// once per connection where sessions are kept whole, before every transaction behind a transaction pooler); with `limits`, the server bounds the transaction's waits.
    ///
    /// Cancelling the task does not close the connection: PostgresNIO never answers a statement written to a channel
    /// that closed, so the body's next statement would wait forever and its connection would never return to the pool
    /// (which then never shuts down). The server's limits end what a caller gave up on instead.
    @discardableResult
    package func inTransaction<Result>(
        logger: Logger,
        sessions: DatabaseSessions? = nil,
        limits: TransactionLimits? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        // A statement written to a closed connection would never be answered: nothing is sent, nothing committed.
        guard !isClosed else { throw StoreError(.notCommitted, "the connection had closed before the transaction began; nothing was sent") }
        // Before BEGIN, so that a rollback cannot undo it.
        try await sessions?.prepare(self, logger: logger)
        try await query("BEGIN", logger: logger).readToEnd()
        let result: Result
        do {
            if let limits {
                try await query(TransactionLimits.settingQuery(for: limits), logger: logger).readToEnd()
            } else if sessions?.makesSessionsDurable != true {
                try await query(TransactionLimits.durableCommitQuery, logger: logger).readToEnd()
            }
            result = try await body(self)
        } catch {
            // A closed connection has no transaction left to roll back, and a statement written to it would never be
            // answered (PostgresNIO drops what is written to a closed channel without failing it).
            guard !isClosed else { throw error }
            do {
                try await query("ROLLBACK", logger: logger).readToEnd()
            } catch let rollbackError {
                // The connection is most likely gone, and with it the transaction.
                logger.warning("rollback failed", metadata: ["error": "\(String(reflecting: rollbackError))"])
            }
            throw error
        }
        // The server ended the session before COMMIT was sent (an idle limit, a terminated backend): nothing committed.
        guard !isClosed else { throw StoreError(.notCommitted, "the connection closed before COMMIT: the transaction did not commit") }
        // The future-returning query collects every row and gives the command tag: `COMMIT`, or `ROLLBACK` when the
        // transaction had already failed.
        let tag = try await query(PostgresQuery(unsafeSQL: "COMMIT"), logger: logger).get().metadata.command
        guard tag == "COMMIT" else {
            throw StoreError(.notCommitted, "the database answered \(tag) to COMMIT: an earlier statement of the transaction failed")
        }
        return result
    }
}
