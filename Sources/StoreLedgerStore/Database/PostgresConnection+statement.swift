import Logging
import PostgresNIO

extension PostgresConnection {
    /// Runs one of the hot statements (the append, the claim, the completion) and reads its rows to the end, so an
    /// error that follows the rows is thrown here. Callers run it inside ``inTransaction(logger:isolation:_:)``, whose
    /// checked `COMMIT` is what makes its effects count.
    ///
    /// This is the one place that chooses how they reach the server, from ``DatabasePooler/current``: where sessions
    /// are kept whole, as the named prepared statement `Statement.name` (parsed once per connection; its session runs
    /// with generic plans, see ``GenericPlanSessions``); behind a transaction pooler, as an unnamed extended-protocol
    /// statement with the same SQL and binds, parsed and planned on each call (PgBouncer before 1.21 cannot carry a
    /// named statement from one transaction to the next, and a custom plan of these statements is the generic one's
    /// shape: docs/operations.md#pgbouncer).
    func run<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws -> [Statement.Row] {
        if DatabasePooler.current.keepsSessions {
            try await GenericPlanSessions.shared.ensure(on: self, logger: logger)
            return try await execute(statement, logger: logger).readToEnd()
        }
        let query = PostgresQuery(unsafeSQL: Statement.sql, binds: try statement.makeBindings())
        return try await self.query(query, logger: logger).map { try statement.decodeRow($0) }.readToEnd()
    }
}
