import PostgresNIO

/// Server-side bounds on one transaction, so that nothing of it outlives its caller by long: set right after `BEGIN`
/// with `set_config(…, true)` (as `SET LOCAL`: they end with the transaction, and hold behind a transaction pooler).
///
/// A client can vanish without closing its socket (a dropped NAT entry, a partition, a killed VM): its backend would
/// sit idle in transaction, or wait on a lock, holding its row locks for the hours TCP takes to notice, and every
/// worker touching those rows would stall behind it. With these, the server ends such a transaction itself.
package struct TransactionLimits: Sendable, Equatable {
    /// The longest wait for one lock (`lock_timeout`).
    package var lockWait: Duration
    /// The longest one statement may run (`statement_timeout`).
    package var statement: Duration
    /// How long the transaction may wait for its client's next statement before the server ends the session
    /// (`idle_in_transaction_session_timeout`).
    package var idle: Duration
    /// How often a running statement checks that its client is still there (`client_connection_check_interval`,
    /// PostgreSQL 14 and later; older servers skip it).
    package var clientCheck: Duration
    /// How long what the server sends may stay unacknowledged before it closes the connection: ``statement``
    /// (`tcp_user_timeout`, TCP connections only). A statement blocked writing its rows to a client that vanished (a
    /// claim's hundreds of bodies fill the socket's buffers) heeds neither a timeout nor the client check, only this:
    /// without it, its transaction and row locks would last until TCP gave up, about fifteen minutes.
    package var unacknowledgedSend: Duration { statement }

    /// Creates limits.
    package init(lockWait: Duration, statement: Duration, idle: Duration, clientCheck: Duration = .seconds(1)) {
        self.lockWait = lockWait
        self.statement = statement
        self.idle = idle
        self.clientCheck = clientCheck
    }

    /// Limits for a transaction that must finish within `lease` (a worker's batch): no lock wait, statement or idle
    /// spell may exceed it.
    package init(lease: Duration) {
        self.init(lockWait: lease, statement: lease, idle: lease)
    }

    /// Limits for a short transaction that claims rows for `lease` (a queue claim, a lease rescue, a webhook claim):
    /// its lock waits and statements bounded by the lease, its idle spells by ten leases and at least a minute. A
    /// client alive but slowed (a loaded machine) is never cut off between two statements, which PostgresNIO would
    /// never answer once the server closed the connection; one that vanished frees the rows within minutes, not the
    /// hours TCP takes.
    package static func claim(lease: Duration) -> TransactionLimits {
        TransactionLimits(lockWait: lease, statement: lease, idle: max(lease * 10, .seconds(60)))
    }

    /// Makes the transaction's commit durable: `synchronous_commit = off` (set for a role, a database or the server, a
    /// common tuning) lets `COMMIT` answer before its WAL record is flushed, and a crash then loses a transaction whose
    /// success was already reported: an acknowledgement Apple will never resend. So an `off` becomes `on` for the
    /// transaction (`SET LOCAL` semantics: it holds behind a transaction pooler); `local`, `remote_write`,
    /// `remote_apply` and `on` already flush locally first and stay as they are (`on`, `remote_write` and
    /// `remote_apply` still wait for a configured synchronous standby; `local` does not). ``DatabaseSessions`` does the
    /// same once per session where sessions are kept whole, pinning the value for the session.
    static let durableCommit = """
        CASE WHEN current_setting('synchronous_commit') = 'off' THEN set_config('synchronous_commit', 'on', true) END
        """

    /// ``durableCommit`` alone, for a transaction without limits on a connection whose session is not made durable.
    static var durableCommitQuery: PostgresQuery { "SELECT \(unescaped: durableCommit)" }

    /// The statement ``PostgresNIO/PostgresConnection/inTransaction(logger:sessions:limits:isolation:_:)`` runs right
    /// after `BEGIN` for a transaction with limits: the commit made durable (``durableCommit``) and the limits set.
    static func settingQuery(for limits: TransactionLimits) -> PostgresQuery {
        return """
            SELECT \(unescaped: durableCommit),
                   set_config('lock_timeout', \(Self.milliseconds(limits.lockWait)), true),
                   set_config('statement_timeout', \(Self.milliseconds(limits.statement)), true),
                   set_config('idle_in_transaction_session_timeout', \(Self.milliseconds(limits.idle)), true),
                   CASE WHEN current_setting('server_version_num')::int >= 140000
                        THEN set_config('client_connection_check_interval', \(Self.milliseconds(limits.clientCheck)), true) END,
                   set_config('tcp_user_timeout', \(Self.milliseconds(limits.unacknowledgedSend)), true)
            """
    }

    /// A duration as a setting's value in milliseconds (at least 1: 0 would switch the limit off).
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}
