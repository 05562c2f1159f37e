import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization

extension TestDatabase {
    /// Runs `body` while another session's transaction holds `table` locked in `mode` (as a long transaction, a
    /// `pg_dump` or a stuck migration would), and releases the lock after it, or after 20 s at most. A lock not taken
    /// within 20 s (the server's lock_timeout) fails the call.
    func withTableLocked(_ table: String, mode: String = "ACCESS EXCLUSIVE", _ body: @Sendable () async throws -> Void) async throws {
        let locked = AnsweredFlag()
        let release = AnsweredFlag()
        let ended = AnsweredFlag()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [client, logger] in
                defer { ended.set() }
                try await client.inTransaction(logger: logger) { connection in
                    // The server ends a wait for the lock (a query blocked in it does not answer cancellation).
                    try await connection.query("SET LOCAL lock_timeout = '20s'", logger: logger).readToEnd()
                    try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(table) IN \(mode) MODE"), logger: logger).readToEnd()
                    locked.set()
                    for _ in 0..<2_000 where !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
                }
            }
            // A lock that cannot be taken ends the locking session (lock_timeout), and its error comes from the group.
            while !locked.isSet && !ended.isSet { try await Task.sleep(for: .milliseconds(5)) }
            guard locked.isSet else {
                try await group.waitForAll()
                throw StoreError.configuration("\(table) was not locked")
            }
            defer { release.set() }
            try await body()
            release.set()
            try await group.waitForAll()
        }
    }
}

/// A flag one task sets and another polls.
final class AnsweredFlag: Sendable {
    private let value = Mutex(false)
    /// Whether it was set.
    var isSet: Bool { value.withLock { $0 } }
    /// Sets it.
    func set() { value.withLock { $0 = true } }
}
