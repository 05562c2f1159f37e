import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerTestSupport
import Synchronization
import Testing

@testable import StoreLedgerStore

/// The event log's group commit: appends that arrive while the allowed transactions are in flight share the next
/// one, each caller still learns its own id only after that transaction committed, and one input the database
/// refuses never costs the others of its batch their acknowledgement.
@Suite("Group commit")
struct GroupCommitTests {
    /// A counter tasks bump as they start.
    final class Counter: Sendable {
        private let value = Mutex(0)
        /// The count.
        var count: Int { value.withLock { $0 } }
        /// Adds one.
        func increment() { value.withLock { $0 += 1 } }
    }

    static func event(_ index: Int, userAgent: String?) -> NewEvent {
        NewEvent(
            source: .appleNotification, environmentHint: index.isMultiple(of: 3) ? nil : .production, route: "/notifications/apple",
            body: ByteBuffer(string: #"{"signedPayload":"a.b.\#(index)"}"#), userAgent: userAgent
        )
    }

    /// Holds `event_queue` locked while `appends` are started and have all queued behind the blocked
    /// transactions (`blocked` of them), then lets them go and returns each append's outcome by index.
    static func appendBehindALock(
        _ db: TestDatabase, log: EventLog, blocked: Int, events: [NewEvent], logger: (@Sendable (Int) -> Logger)? = nil
    ) async throws -> [Int: Result<AppendedEvent, any Error>] {
        let appending = Mutex<Task<[Int: Result<AppendedEvent, any Error>], Never>?>(nil)
        try await db.withTableLocked("event_queue") {
            let started = Counter()
            let appends = Task {
                await withTaskGroup(of: (Int, Result<AppendedEvent, any Error>).self) { appends in
                    for (index, event) in events.enumerated() {
                        appends.addTask {
                            started.increment()
                            let logger = logger?(index) ?? db.logger
                            do { return (index, .success(try await log.append(event, logger: logger))) } catch { return (index, .failure(error)) }
                        }
                        // The first `blocked` take the transactions and wait on the lock before the rest arrive.
                        if index + 1 == blocked {
                            _ = try? await eventually { try await waitingOnLocks(db) == blocked }
                        }
                    }
                    var outcomes: [Int: Result<AppendedEvent, any Error>] = [:]
                    for await (index, outcome) in appends { outcomes[index] = outcome }
                    return outcomes
                }
            }
            appending.withLock { $0 = appends }
            #expect(try await eventually { started.count == events.count })
            #expect(try await eventually { try await waitingOnLocks(db) == blocked })
            // Every append queues synchronously as it starts; a moment's margin covers the last one's first steps.
            try await Task.sleep(for: .milliseconds(100))
        }
        return await (try #require(appending.withLock { $0 })).value
    }

    /// Backends of this database waiting for a lock.
    static func waitingOnLocks(_ db: TestDatabase) async throws -> Int {
        try await db.scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    }

    @Test func concurrentAppendsShareTransactionsAndEachCallerGetsItsOwnRow() async throws {
        try await TestDatabase.withFresh { db in
            let log = EventLog(client: db.client, concurrentCommits: 2)
            // Headers as requests send them: absent (NULL), empty, or a value; each must come back as it went in.
            let agents: [String?] = (0..<300).map { $0.isMultiple(of: 5) ? nil : ($0.isMultiple(of: 7) ? "" : "agent-\($0)") }
            let events = agents.enumerated().map { Self.event($0.offset, userAgent: $0.element) }
            let outcomes = try await Self.appendBehindALock(db, log: log, blocked: 2, events: events)
            let ids = try outcomes.sorted { $0.key < $1.key }.map { try $0.value.get().id.rawValue }
            #expect(ids.count == 300)
            #expect(Set(ids).count == 300)

            var stored: [Int64: (String, String?, String?)] = [:]
            let rows = try await db.client.query(
                "SELECT e.id, convert_from(e.body, 'UTF8'), e.user_agent, e.environment_hint FROM events e JOIN event_queue q ON q.event_id = e.id WHERE q.state = 'pending'",
                logger: db.logger
            )
            for try await (id, body, agent, hint) in rows.decode((Int64, String, String?, String?).self) { stored[id] = (body, agent, hint) }
            for (index, id) in ids.enumerated() {
                #expect(stored[id]?.0 == #"{"signedPayload":"a.b.\#(index)"}"#, "event \(index)")
                #expect(stored[id]?.1 == agents[index], "event \(index)")
                #expect(stored[id]?.2 == (index.isMultiple(of: 3) ? nil : "production"), "event \(index)")
            }
            // Two transactions took the first two; the 298 queued behind them went in a few batches (at most 128
            // events each), not in 298 transactions. Rows written by one transaction share its xmin.
            let transactions = try await db.scalar("SELECT count(DISTINCT xmin::text) FROM events")
            #expect(transactions >= 5 && transactions <= 12, "\(transactions) transactions")
        }
    }

    /// A batch is tried again event by event only when what one event carries may be why the database refused it: a
    /// value it cannot store, a constraint or a trigger's check. A lock or statement timeout every event would meet
    /// again is every caller's error at once, not 128 more transactions in a row holding the commit slot; nor is a
    /// session that ended.
    @Test func onlyARefusalOneEventMayCauseIsTriedEventByEvent() async throws {
        try await TestDatabase.withFresh { db in
            @Sendable func refusal(_ sql: String) async throws -> PSQLError? {
                await #expect(throws: PSQLError.self) {
                    try await db.client.inTransaction(logger: db.logger) { connection in
                        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: db.logger).readToEnd()
                    }
                }
            }
            let value = try #require(try await refusal("SELECT convert_from('\\x00'::bytea, 'UTF8')"))
            #expect(GroupCommit.refusedForOneEvent(value), "\(String(reflecting: value))")
            let division = try #require(try await refusal("SELECT 1/0"))
            #expect(GroupCommit.refusedForOneEvent(division))
            let check = try #require(try await refusal("DO $$ BEGIN RAISE EXCEPTION 'check' USING ERRCODE = 'P0001'; END $$"))
            #expect(GroupCommit.refusedForOneEvent(check))
            try await db.withTableLocked("event_queue") {
                let timeout = try #require(
                    try await refusal("SET LOCAL lock_timeout = '100ms'; LOCK TABLE event_queue IN ROW EXCLUSIVE MODE"))
                #expect(!GroupCommit.refusedForOneEvent(timeout), "\(String(reflecting: timeout))")
            }
            let statementTimeout = try #require(try await refusal("SET LOCAL statement_timeout = '50ms'; SELECT pg_sleep(1)"))
            #expect(!GroupCommit.refusedForOneEvent(statementTimeout))
            #expect(GroupCommit.refusedForOneEvent(StoreError(.notCommitted, "COMMIT answered ROLLBACK")))
        }
    }

    /// A server that ends the session (a terminated backend, PgBouncer's "server conn crashed?") says nothing of
    /// whether the batch committed: its callers are answered with the error, as for a lost connection, and their
    /// events are not appended again one by one (which would store twice whatever had committed). A statement the
    /// server refuses is still told apart.
    @Test func aBatchWhoseSessionTheServerEndedIsNotAppendedAgain() async throws {
        try await TestDatabase.withFresh { db in
            let refused = await #expect(throws: PSQLError.self) { try await db.client.query("SELECT 1/0", logger: db.logger).readToEnd() }
            #expect(refused?.endsSession == false)
            // The log has a pool of its own: the connection the server ends is one of its, never one the test's own
            // queries could lease next.
            try await TestDatabase.withClient(db.url, maximumConnections: 4) { logClient in
                let log = EventLog(client: logClient, concurrentCommits: 1)
                /// Ends the session waiting on the lock; false when none came to wait.
                @Sendable func terminateTheWaiter() async throws -> Bool {
                    guard try await eventually(within: .seconds(15), { try await Self.waitingOnLocks(db) == 1 }) else { return false }
                    try await db.client.query(
                        """
                        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock'
                        """,
                        logger: db.logger
                    ).readToEnd()
                    return true
                }
                try await db.withTableLocked("event_queue") {
                    let first = Task { try await log.append(Self.event(0, userAgent: nil), logger: db.logger) }
                    #expect(try await eventually { try await Self.waitingOnLocks(db) == 1 })
                    let batch = (1...2).map { index in Task { try await log.append(Self.event(index, userAgent: nil), logger: db.logger) } }
                    let queued = try await eventually { log.waitingAppends == 2 }
                    #expect(queued)
                    #expect(try await terminateTheWaiter())
                    let ended = await #expect(throws: PSQLError.self) { try await first.value }
                    #expect(ended?.endsSession == true)
                    // The next batch waits on the lock in its turn, on another connection (the closed one is not used), and
                    // is ended too; or, in the moment between the lease and its first statement, the connection closed and
                    // its statement was dropped (PostgresNIO answers nothing on a closed channel): it stalls until the
                    // commit deadline. Either way it fails, and is not appended again.
                    _ = try await terminateTheWaiter()
                    for task in batch {
                        await #expect {
                            try await task.value
                        } throws: { $0 is PSQLError || $0 is DeadlineExceeded }
                    }
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    /// A caller that stops waiting (the receiver's store deadline cancels it and answers 503) leaves the queue: its
    /// event is not appended later, and its body is not held while the database hangs.
    @Test func aCallerThatStopsWaitingLeavesTheQueue() async throws {
        try await TestDatabase.withFresh { db in
            let log = EventLog(client: db.client, concurrentCommits: 1)
            let others = Mutex<[Task<AppendedEvent, any Error>]>([])
            try await db.withTableLocked("event_queue") {
                others.withLock { $0.append(Task { try await log.append(Self.event(0, userAgent: nil), logger: db.logger) }) }
                #expect(try await eventually { try await Self.waitingOnLocks(db) == 1 })
                let abandoned = Task { try await log.append(Self.event(1, userAgent: nil), logger: db.logger) }
                let queued1 = try await eventually { log.waitingAppends == 1 }
                #expect(queued1)
                others.withLock { $0.append(Task { try await log.append(Self.event(2, userAgent: nil), logger: db.logger) }) }
                let queued2 = try await eventually { log.waitingAppends == 2 }
                #expect(queued2)
                abandoned.cancel()
                await #expect(throws: CancellationError.self) { try await abandoned.value }
                #expect(log.waitingAppends == 1)
            }
            for task in others.withLock({ $0 }) { _ = try await task.value }
            let bodies = try await db.client.query("SELECT convert_from(body, 'UTF8') FROM events ORDER BY id", logger: db.logger)
            var stored: [String] = []
            for try await body in bodies.decode(String.self) { stored.append(body) }
            #expect(stored == [#"{"signedPayload":"a.b.0"}"#, #"{"signedPayload":"a.b.2"}"#])
        }
    }

    /// While more than `maxWaitingBytes` of bodies wait for the database, a new append is refused at once (the
    /// receiver answers 503 and Apple retries) rather than queued; those queued are still stored.
    @Test func appendsBeyondTheWaitingLimitAreRefusedAtOnce() async throws {
        try await TestDatabase.withFresh { db in
            let size = ByteBuffer(string: #"{"signedPayload":"a.b.1"}"#).readableBytes
            let log = EventLog(client: db.client, concurrentCommits: 1, maxWaitingBytes: 2 * size)
            let queued = Mutex<[Task<AppendedEvent, any Error>]>([])
            try await db.withTableLocked("event_queue") {
                queued.withLock { $0.append(Task { try await log.append(Self.event(0, userAgent: nil), logger: db.logger) }) }
                #expect(try await eventually { try await Self.waitingOnLocks(db) == 1 })
                for index in 1...2 {
                    queued.withLock { $0.append(Task { try await log.append(Self.event(index, userAgent: nil), logger: db.logger) }) }
                }
                let queued3 = try await eventually { log.waitingAppends == 2 }
                #expect(queued3)
                // Refused at once: were it queued, the deadline would fail it instead.
                let refused = await #expect(throws: StoreError.self) {
                    try await withDeadline(.seconds(5)) { try await log.append(Self.event(3, userAgent: nil), logger: db.logger) }
                }
                #expect(refused?.code == .unavailable)
            }
            for task in queued.withLock({ $0 }) { _ = try await task.value }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 3)
        }
    }

    /// A batch is logged under its own requests' ids, not those of the request whose append started the commit loop
    /// (which may have been answered long before).
    @Test func aBatchLogsUnderItsOwnRequestsIDs() async throws {
        try await TestDatabase.withFresh { db in
            let logs = AppStoreAPIClientTests.CapturedLogs()
            let log = EventLog(client: db.client, concurrentCommits: 1)
            let events = (0..<6).map { index in
                NewEvent(
                    source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.\#(index)"}"#),
                    userAgent: index == 3 ? "bad\u{0}agent" : "good", requestID: "r\(index)")
            }
            _ = try await Self.appendBehindALock(db, log: log, blocked: 1, events: events) { index in
                var logger = Logger(label: "capture") { _ in AppStoreAPIClientTests.CapturedLogs.Handler(sink: logs) }
                logger[metadataKey: "request_id"] = .string("caller-\(index)")
                return logger
            }
            let refused = try #require(logs.all.first { $0.contains("the database refused a batch of appends") })
            // Logged as `"request_id": r1,r2,…` in some order: the batch's own requests, each once.
            let value = try #require(refused.firstMatch(of: #/"request_id": ([r0-9,]+)/#)?.output.1)
            #expect(Set(value.split(separator: ",")) == ["r1", "r2", "r3", "r4", "r5"], "\(refused)")
            #expect(!refused.contains("caller-"), "\(refused)")
        }
    }

    /// How a poisoned input makes the database refuse its batch: a value a text column refuses (the statement
    /// fails) or a deferred constraint (the `COMMIT` fails).
    enum Poison: String, CaseIterable, Sendable {
        case statementError, commitError
    }

    @Test(arguments: Poison.allCases)
    func anInputTheDatabaseRefusesFailsAloneAndItsBatchIsStillStored(poison: Poison) async throws {
        try await TestDatabase.withFresh { db in
            let badAgent: String
            switch poison {
            case .statementError:
                badAgent = "bad\u{0}agent"  // text cannot hold a NUL byte
            case .commitError:
                badAgent = "poison"
                try await CommitFaultTests.installCommitTrigger(db, on: "events", when: "NEW.user_agent = 'poison'")
            }
            let log = EventLog(client: db.client, concurrentCommits: 1)
            var events = (0..<11).map { Self.event($0, userAgent: "good-\($0)") }
            events.insert(Self.event(99, userAgent: badAgent), at: 6)
            let outcomes = try await Self.appendBehindALock(db, log: log, blocked: 1, events: events)
            for (index, outcome) in outcomes {
                if index == 6 {
                    #expect(throws: (any Error).self) { try outcome.get() }
                } else {
                    #expect(throws: Never.self) { try outcome.get() }
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 11)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue") == 11)
            #expect(try await db.scalar("SELECT count(*) FROM events WHERE user_agent NOT LIKE 'good-%'") == 0)
        }
    }
}
