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

    /// The statement that sets them inside the transaction.
    var settingQuery: PostgresQuery {
        """
        SELECT set_config('lock_timeout', \(Self.milliseconds(lockWait)), true),
               set_config('statement_timeout', \(Self.milliseconds(statement)), true),
               set_config('idle_in_transaction_session_timeout', \(Self.milliseconds(idle)), true),
               CASE WHEN current_setting('server_version_num')::int >= 140000
                    THEN set_config('client_connection_check_interval', \(Self.milliseconds(clientCheck)), true) END
        """
    }

    /// A duration as a setting's value in milliseconds (at least 1: 0 would switch the limit off).
    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
    }
}
