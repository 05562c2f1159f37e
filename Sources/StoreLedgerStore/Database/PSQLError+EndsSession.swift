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

extension PSQLError {
    /// What an operator command prints for this error, which PostgresNIO's own description keeps generic: a refusal
    /// (nothing of its transaction committed) with the server's message, or a lost session, whose change may or may not
    /// have been made — so that a command is not blindly run again (a key created twice, a name then "taken").
    package var operatorMessage: String {
        let cause = DatabaseURL.failureCause(self)
        guard endsSession else { return "the database refused it, and nothing of it was changed: \(cause)" }
        return "the connection to the database ended before it answered (\(cause)): whether this command's change was made "
            + "is not known; look (storeledger stats, inspect, or the command's list) before running it again"
    }
}
