import Foundation
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// A transaction whose client gave up or vanished must not hold its locks for the hours TCP takes to notice: the
/// limits the worker sets make the server end what its client left behind.
@Suite("Faults: transactions outlived by their clients")
struct TransactionLimitsTests {
    /// A batch's limits, as a worker with a 30 s lease sets them.
    static let workerLimits = TransactionLimits(lease: .seconds(30))
    /// Limits whose lock wait ends soon after a test's deadline.
    static let briefLockWait = TransactionLimits(lockWait: .seconds(2), statement: .seconds(30), idle: .seconds(30))

    /// How many sessions hold advisory lock `key`.
    static func advisoryLocks(_ key: Int, _ db: TestDatabase) async throws -> Int {
        try await db.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = \(key)")
    }

    /// A statement stuck behind a lock when its deadline passes: the caller gets its answer at the deadline, and the
    /// server gives up the wait at the transaction's lock limit (the lock still held by the other session), rolling
    /// back and freeing whatever locks it had taken, not waiting on for as long as the lock lasts.
    @Test func aTransactionPastItsDeadlineLeavesTheServerAtItsLockLimit() async throws {
        try await TestDatabase.withFresh { db in
            try await db.withTableLocked("subscriptions") {
                let start = ContinuousClock.now
                await #expect(throws: DeadlineExceeded.self) {
                    try await withDeadline(.seconds(1)) { [db] in
                        try await db.client.inTransaction(logger: db.logger, limits: Self.briefLockWait) { connection in
                            try await connection.query("SELECT pg_advisory_xact_lock(4242)", logger: db.logger).readToEnd()
                            try await connection.query("SELECT count(*) FROM subscriptions", logger: db.logger).readToEnd()
                        }
                    }
                }
                #expect(start.duration(to: .now) < .seconds(5))
                let gone = try await eventually(within: .seconds(5)) { try await GroupCommitTests.waitingOnLocks(db) == 0 }
                #expect(gone)
                // Freed by the rollback that follows the failed wait, which a loaded machine may send a moment later;
                // still while the table stays locked.
                let freed = try await eventually(within: .seconds(10)) { try await Self.advisoryLocks(4242, db) == 0 }
                #expect(freed)
            }
        }
    }

    /// A client that stops talking in the middle of its transaction (as one whose network vanished): the server ends
    /// the session after the idle limit and frees its locks, and the client, should it come back, is told.
    @Test func theServerEndsATransactionItsClientLeftIdle() async throws {
        try await TestDatabase.withFresh { db in
            // Idle 5 s, the client silent for 20: wide enough that a loaded machine still sees the lock held first.
            let limits = TransactionLimits(lockWait: .seconds(30), statement: .seconds(30), idle: .seconds(5))
            // The check below must not wait for a connection to open (seconds, on a loaded machine): two are opened
            // now, one for the holding transaction and one for the check.
            async let first: Int = Self.advisoryLocks(4343, db)
            async let second: Int = Self.advisoryLocks(4343, db)
            #expect(try await [first, second] == [0, 0])
            let (locked, taken) = AsyncStream<Void>.makeStream()
            let holding = Task {
                defer { taken.finish() }  // never leaves the test waiting, should the lock not be taken
                try await db.client.inTransaction(logger: db.logger, limits: limits) { connection in
                    try await connection.query("SELECT pg_advisory_xact_lock(4343)", logger: db.logger).readToEnd()
                    taken.yield()
                    try await Task.sleep(for: .seconds(20))
                }
            }
            for await _ in locked { break }
            #expect(try await Self.advisoryLocks(4343, db) == 1)
            // Free again while the client still sleeps: the server ended its transaction.
            let freed = try await eventually(within: .seconds(15)) { try await Self.advisoryLocks(4343, db) == 0 }
            #expect(freed)
            let ended = await #expect(throws: StoreError.self) { try await holding.value }
            #expect(ended?.code == .notCommitted)
        }
    }

    /// A claim, a rescue and a webhook dispatcher's claim are bounded by their lease on the server as a batch is: one whose worker went silent
    /// (here: stuck behind a lock the test holds for 20 s) ends within the lease rather than holding its rows, invisible
    /// to every other claim, for as long as its client's socket lingers.
    @Test func claimsAndRescuesEndWithinTheirLease() async throws {
        try await TestDatabase.withFresh { db in
            let queue = EventQueue(client: db.client)
            try await db.withTableLocked("event_queue") {
                let start = ContinuousClock.now
                await #expect(throws: (any Error).self) {
                    try await queue.claim(limit: 10, owner: "w", lease: .milliseconds(500), logger: db.logger)
                }
                await #expect(throws: (any Error).self) {
                    try await queue.rescueExpiredLeases(policy: RetryPolicy(), lease: .milliseconds(500), logger: db.logger)
                }
                #expect(start.duration(to: .now) < .seconds(10), "the lock is held for 20 s")
            }
            // The webhook dispatcher's claim of due deliveries, likewise.
            try await db.withTableLocked("webhook_deliveries") {
                let start = ContinuousClock.now
                await #expect(throws: (any Error).self) {
                    try await WebhookDeliveryStore(client: db.client).claimDue(limit: 10, leaseSeconds: 0.5, logger: db.logger)
                }
                #expect(start.duration(to: .now) < .seconds(10), "the lock is held for 20 s")
            }
        }
    }

    /// A transaction begun on a connection the server has closed (a terminated backend, a pooler restart, leased
    /// before the pool heard of it) fails at once saying nothing was sent. Before, its first statement was written to
    /// the closed channel, which PostgresNIO drops without failing it: the transaction waited forever.
    @Test func aTransactionOnAConnectionTheServerClosedFailsAtOnce() async throws {
        try await TestDatabase.withFresh { db in
            let connection = try await PostgresConnection.connect(
                configuration: try db.url.connectionConfiguration(), id: 1, logger: db.logger)
            let pid = try #require(try await connection.query("SELECT pg_backend_pid()", logger: db.logger).decode(Int32.self).readToEnd().first)
            let terminated = try await db.client.query("SELECT pg_terminate_backend(\(pid))", logger: db.logger).decode(Bool.self).readToEnd()
            #expect(terminated == [true])
            // Closed, and its handlers gone: what is written now is dropped.
            try await withDeadline(.seconds(30)) { try await connection.closeFuture.get() }
            let error = await #expect(throws: StoreError.self) {
                try await withDeadline(.seconds(10)) {
                    try await connection.inTransaction(logger: db.logger) { connection in
                        try await connection.query("SELECT 1", logger: db.logger).readToEnd()
                    }
                }
            }
            #expect(error?.code == .notCommitted, "\(String(describing: error))")
        }
    }

    /// A claim's limits: its waits bounded by the lease, its idle spells by ten leases and at least a minute, so that a
    /// live but slowed worker is never cut off between two statements (PostgresNIO never answers a statement written to
    /// a connection the server closed: the run would hang).
    @Test func aClaimMayIdleTenLeasesAndAtLeastAMinute() {
        let standard = TransactionLimits.claim(lease: .seconds(30))
        #expect(standard == TransactionLimits(lockWait: .seconds(30), statement: .seconds(30), idle: .seconds(300)))
        #expect(TransactionLimits.claim(lease: .milliseconds(300)).idle == .seconds(60))
    }

    /// The limits hold only for their transaction (behind a transaction pooler the next one may be anyone's) and
    /// reach the server as set.
    @Test func theLimitsAreTheTransactionsOwn() async throws {
        try await TestDatabase.withFresh(maximumConnections: 1) { db in
            let inside = try await db.client.inTransaction(logger: db.logger, limits: Self.workerLimits) { connection in
                try await connection.query(
                    """
                    SELECT current_setting('lock_timeout'), current_setting('statement_timeout'),
                           current_setting('idle_in_transaction_session_timeout'), current_setting('client_connection_check_interval'),
                           current_setting('tcp_user_timeout')
                    """,
                    logger: db.logger
                ).decode((String, String, String, String, String).self).readToEnd()
            }
            // tcp_user_timeout too (the test database is reached over TCP; a Unix socket reads 0): a statement blocked
            // sending rows to a client that vanished ends within the limit (shown in milliseconds).
            #expect(inside.first.map { [$0.0, $0.1, $0.2, $0.3, $0.4] } == ["30s", "30s", "30s", "1s", "30000"])
            let after = try await db.client.query(
                "SELECT current_setting('lock_timeout'), current_setting('idle_in_transaction_session_timeout'), current_setting('tcp_user_timeout')",
                logger: db.logger
            )
            .decode((String, String, String).self).readToEnd()
            #expect(after.first.map { [$0.0, $0.1, $0.2] } == ["0", "0", "0"])
        }
    }
}
