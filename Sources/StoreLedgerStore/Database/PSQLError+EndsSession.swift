package import PostgresNIO

extension PSQLError {
    /// Whether the server ended the session, not just refused a statement: a FATAL or PANIC, a connection exception
    /// (SQLSTATE class 08, e.g. PgBouncer's "server conn crashed?" when the server died, perhaps just after it
    /// committed) or an operator's intervention (57P: a shutdown, a crash, a terminated backend). Such an error says
    /// nothing of whether the transaction in flight committed; a refusal (an ERROR) says it did not.
    package var endsSession: Bool {
        guard code == .server else { return true }
        let state = serverInfo?[.sqlState] ?? ""
        let severity = serverInfo?[.severity] ?? ""
        return state.hasPrefix("08") || state.hasPrefix("57P") || severity == "FATAL" || severity == "PANIC"
    }

    /// Whether a lock was not granted within the transaction's `lock_timeout` (SQLSTATE 55P03): the statement was
    /// refused and nothing of the transaction committed, so it may be tried again later.
    package var isLockTimeout: Bool { serverInfo?[.sqlState] == "55P03" }
}
