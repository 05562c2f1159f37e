import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Event queue")
struct EventQueueTests {
    static let envelope = #"{"signedPayload":"a.b.c"}"#

    @discardableResult
    func append(_ db: TestDatabase, count: Int) async throws -> [EventID] {
        let log = EventLog(client: db.client)
        var ids: [EventID] = []
        for _ in 0..<count {
            ids.append(try await log.append(NewEvent(source: .appleNotification, body: ByteBuffer(string: Self.envelope)), logger: db.logger).id)
        }
        return ids
    }

    func complete(
        _ db: TestDatabase, _ results: [(event: ClaimedEvent, outcome: EventOutcome)], owner: String, policy: RetryPolicy = .init()
    ) async throws {
        try await db.client.inTransaction(logger: db.logger) { connection in
            try await EventQueue.complete(results, owner: owner, policy: policy, on: connection, sessions: DatabaseSessions(), logger: db.logger)
        }
    }

    func state(
        _ db: TestDatabase, _ id: EventID
    ) async throws -> (state: String, attempts: Int, delay: Double, lastError: String?, rejectReason: String?) {
        let rows = try await db.client.query(
            """
            SELECT state, attempts, extract(epoch FROM available_at - updated_at)::float8, last_error, reject_reason
            FROM event_queue WHERE event_id = \(id.rawValue)
            """,
            logger: db.logger
        )
        for try await row in rows.decode((String, Int32, Double, String?, String?).self) {
            return (row.0, Int(row.1), row.2, row.3, row.4)
        }
        throw StoreError.configuration("no queue row for \(id)")
    }

    /// Moves every lease into the past, as if its holder had stopped answering long ago.
    func expireLeases(_ db: TestDatabase) async throws {
        try await db.client.query(
            "UPDATE event_queue SET lease_expires_at = now() - interval '1 second' WHERE state = 'processing'", logger: db.logger
        )
    }

    @Test func claimReturnsTheRawBodyAndLeasesTheEvent() async throws {
        try await TestDatabase.withFresh { db in
            let ids = try await append(db, count: 3)
            let queue = EventQueue(client: db.client)
            let claimed = try await queue.claim(limit: 10, owner: "w1", lease: .seconds(30), logger: db.logger)
            #expect(claimed.map(\.id) == ids)
            #expect(claimed.allSatisfy { $0.attempt == 1 && String(buffer: $0.body) == Self.envelope })
            #expect(try await queue.claim(limit: 10, owner: "w2", lease: .seconds(30), logger: db.logger).isEmpty)
            try await complete(db, claimed.map { ($0, .done) }, owner: "w1")
            #expect(try await state(db, ids[0]).state == "done")
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done' AND finished_at IS NOT NULL") == 3)
        }
    }

    /// Bodies the size of real notifications (a JWS with three certificate chains is ~15 kB), each different.
    static func largeEnvelope(_ index: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let payload = String((0..<15_000).map { alphabet[($0 * 7 + index * 13) % alphabet.count] })
        return #"{"signedPayload":""# + payload + #""}"#
    }

    @Test func claimedAndReplayedBodiesAreExactAndHoldNoReadBufferOfTheConnection() async throws {
        try await TestDatabase.withFresh { db in
            let log = EventLog(client: db.client)
            var ids: [EventID] = []
            for index in 0..<40 {
                let body = ByteBuffer(string: Self.largeEnvelope(index))
                ids.append(try await log.append(NewEvent(source: .appleNotification, body: body), logger: db.logger).id)
            }
            let claimed = try await EventQueue(client: db.client).claim(limit: 40, owner: "w", lease: .seconds(30), logger: db.logger)
            let replayed = try await db.client.withConnection { connection in
                try await EventPage.read(after: 0, through: ids.last!.rawValue, limit: 40, on: connection, logger: db.logger)
            }
            for events in [claimed, replayed] {
                #expect(events.map(\.id) == ids)
                for (index, event) in events.enumerated() {
                    #expect(String(buffer: event.body) == Self.largeEnvelope(index))
                    // A slice of the connection's read buffer would keep that whole buffer (32 or 64 kB, seen here) alive.
                    #expect(event.body.storageCapacity <= 2 * event.body.readableBytes)
                }
            }
        }
    }

    @Test func aSliceOfALargerBufferIsCopiedIntoItsOwnStorageAndASmallOneIsKept() {
        var large = ByteBuffer(repeating: 0x41, count: 65_536)
        large.moveReaderIndex(forwardBy: 1_000)
        let slice = large.getSlice(at: large.readerIndex, length: 100)!
        let own = slice.inOwnStorage()
        #expect(own == slice)
        #expect(own.storageCapacity < 1_000)
        let small = ByteBuffer(string: "exactly this")
        #expect(small.inOwnStorage().storageCapacity == small.storageCapacity)
    }

    @Test func concurrentClaimersNeverHoldTheSameEvent() async throws {
        try await TestDatabase.withFresh(maximumConnections: 12) { db in
            try await append(db, count: 400)
            let queue = EventQueue(client: db.client)
            let claims = try await withThrowingTaskGroup(of: [EventID].self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        var mine: [EventID] = []
                        while true {
                            let batch = try await queue.claim(limit: 7, owner: "w\(worker)", lease: .seconds(30), logger: db.logger)
                            if batch.isEmpty { return mine }
                            mine += batch.map(\.id)
                        }
                    }
                }
                return try await group.reduce(into: [[EventID]]()) { $0.append($1) }
            }
            let all = claims.flatMap { $0 }
            #expect(all.count == 400)
            #expect(Set(all).count == 400)
            #expect(claims.filter { !$0.isEmpty }.count > 1)
        }
    }

    @Test func retryPolicyFollowsTheDocumentedSchedule() {
        let policy = RetryPolicy()
        #expect(policy.baseDelay(afterAttempt: 1) == 1)
        #expect(policy.baseDelay(afterAttempt: 2) == 16)
        #expect(policy.baseDelay(afterAttempt: 3) == 81)
        #expect(policy.baseDelay(afterAttempt: 10) == 10_000)
        #expect(policy.baseDelay(afterAttempt: 40) == policy.maximumDelay)
        for attempt in 1...19 {
            let delay = policy.delay(afterAttempt: attempt)
            #expect(delay >= policy.baseDelay(afterAttempt: attempt) * 0.9 && delay <= policy.baseDelay(afterAttempt: attempt) * 1.1)
        }
        #expect(!policy.isExhausted(afterAttempt: 19))
        #expect(policy.isExhausted(afterAttempt: 20))
        // The README's "about 6.5 days" from the first failure to `dead`: the delays after attempts 1–19.
        let total = (1..<policy.maximumAttempts).map { policy.baseDelay(afterAttempt: $0) }.reduce(0, +)
        #expect(total == 562_666)
        #expect((total / 86_400 * 10).rounded() / 10 == 6.5)
        // Jitter actually varies.
        let delays = Set((0..<20).map { _ in policy.delay(afterAttempt: 5) })
        #expect(delays.count > 1)
    }

    @Test func aFailureIsRescheduledWithBackoffAndItsErrorKept() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await append(db, count: 1)[0]
            let queue = EventQueue(client: db.client)
            let policy = RetryPolicy(maximumAttempts: 5, jitter: 0)
            let first = try await queue.claim(limit: 1, owner: "w", lease: .seconds(30), logger: db.logger)
            try await complete(db, [(first[0], .retry(reason: "database hiccup"))], owner: "w", policy: policy)
            var row = try await state(db, id)
            #expect(row.state == "pending")
            #expect(row.lastError == "database hiccup")
            #expect(abs(row.delay - 1) < 0.001)
            // Not claimable before its time (pushed out, so a slow machine cannot outrun the 1 s backoff).
            try await db.client.query(
                "UPDATE event_queue SET available_at = now() + interval '1 hour' WHERE event_id = \(id.rawValue)", logger: db.logger)
            #expect(try await queue.claim(limit: 1, owner: "w", lease: .seconds(30), logger: db.logger).isEmpty)
            try await db.client.query("UPDATE event_queue SET available_at = now() WHERE event_id = \(id.rawValue)", logger: db.logger)
            let second = try await queue.claim(limit: 1, owner: "w", lease: .seconds(30), logger: db.logger)
            #expect(second.first?.attempt == 2)
            try await complete(db, [(second[0], .retry(reason: "again"))], owner: "w", policy: policy)
            row = try await state(db, id)
            #expect(abs(row.delay - 16) < 0.001)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE event_id = \(id.rawValue) AND outcome = 'retry'") == 2)
        }
    }

    @Test func anEventThatExhaustsItsAttemptsIsDeadWithItsHistory() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await append(db, count: 1)[0]
            let queue = EventQueue(client: db.client)
            let policy = RetryPolicy(maximumAttempts: 3, jitter: 0)
            for attempt in 1...3 {
                try await db.client.query("UPDATE event_queue SET available_at = now() WHERE event_id = \(id.rawValue)", logger: db.logger)
                let claimed = try await queue.claim(limit: 1, owner: "w", lease: .seconds(30), logger: db.logger)
                #expect(claimed.first?.attempt == attempt)
                try await complete(db, [(claimed[0], .retry(reason: "failure \(attempt)"))], owner: "w", policy: policy)
            }
            let row = try await state(db, id)
            #expect(row.state == "dead")
            #expect(row.lastError == "failure 3")
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE event_id = \(id.rawValue)") == 3)
            try await db.client.query("UPDATE event_queue SET available_at = now() - interval '1 day'", logger: db.logger)
            #expect(try await queue.claim(limit: 1, owner: "w", lease: .seconds(30), logger: db.logger).isEmpty)
        }
    }

    @Test func aPermanentErrorIsRejectedAtOnceWithItsReason() async throws {
        try await TestDatabase.withFresh { db in
            let ids = try await append(db, count: 2)
            let queue = EventQueue(client: db.client)
            let claimed = try await queue.claim(limit: 2, owner: "w", lease: .seconds(30), logger: db.logger)
            try await complete(db, [(claimed[0], .reject(reason: "badSignature: signature does not verify")), (claimed[1], .done)], owner: "w")
            let rejected = try await state(db, ids[0])
            #expect(rejected.state == "rejected")
            #expect(rejected.rejectReason == "badSignature: signature does not verify")
            #expect(rejected.attempts == 1)
            #expect(try await state(db, ids[1]).state == "done")
        }
    }

    @Test func anExpiredLeaseIsRescuedAndTheZombieCannotComplete() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await append(db, count: 1)[0]
            let queue = EventQueue(client: db.client)
            // Worker A claims with a short lease, then "dies".
            let zombie = try await queue.claim(limit: 1, owner: "A", lease: .seconds(30), logger: db.logger)
            #expect(try await queue.rescueExpiredLeases(policy: .init(), logger: db.logger) == 0)
            try await expireLeases(db)
            #expect(try await queue.rescueExpiredLeases(policy: .init(), logger: db.logger) == 1)
            #expect(try await state(db, id).lastError?.hasPrefix("lease expired: held by A") == true)
            // Not at once: an expired lease is a failed attempt, and waits out the backoff (1 s ± 10 % after the first),
            // measured from the rescue's own clock (`updated_at`): a slow machine takes its time meanwhile.
            let wait = try await db.scalar("SELECT (extract(epoch FROM available_at - updated_at) * 1000)::int8 FROM event_queue")
            #expect((850...1_100).contains(wait), "\(wait) ms")
            try await db.client.query("UPDATE event_queue SET available_at = now()", logger: db.logger)
            // Worker B takes it over.
            let taken = try await queue.claim(limit: 1, owner: "B", lease: .seconds(30), logger: db.logger)
            try #require(taken.count == 1)
            #expect(taken.first?.attempt == 2)
            // The zombie wakes up and tries to finish: fenced, and its transaction rolls back.
            let error = await #expect(throws: StoreError.self) {
                try await complete(db, [(zombie[0], .done)], owner: "A")
            }
            #expect(error?.code == .leaseLost)
            let error2 = await #expect(throws: StoreError.self) {
                try await complete(db, [(zombie[0], .retry(reason: "zombie says retry"))], owner: "A")
            }
            #expect(error2?.code == .leaseLost)
            #expect(try await state(db, id).state == "processing")
            // B's stale attempt number cannot be reused either.
            try await complete(db, [(taken[0], .done)], owner: "B")
            #expect(try await state(db, id).state == "done")
        }
    }

    /// The backoff after an expired lease grows with the attempts, as after any failure, up to the policy's cap.
    @Test func anExpiredLeaseWaitsOutTheBackoffOfItsAttempt() async throws {
        try await TestDatabase.withFresh { db in
            try await append(db, count: 2)
            let queue = EventQueue(client: db.client)
            _ = try await queue.claim(limit: 2, owner: "A", lease: .seconds(30), logger: db.logger)
            try await db.client.query("UPDATE event_queue SET attempts = 3 + (event_id % 2) * 10", logger: db.logger)
            try await expireLeases(db)
            #expect(try await queue.rescueExpiredLeases(policy: RetryPolicy(jitter: 0, maximumDelay: 3_600), logger: db.logger) == 2)
            var waits: [Int: Int] = [:]
            for try await (attempts, seconds) in try await db.client.query(
                "SELECT attempts, round(extract(epoch FROM available_at - updated_at))::int8 FROM event_queue", logger: db.logger
            ).decode((Int32, Int).self) { waits[Int(attempts)] = seconds }
            #expect(waits == [3: 81, 13: 3_600])
        }
    }

    @Test func aLeaseThatExpiresOnTheLastAttemptIsDead() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await append(db, count: 1)[0]
            let queue = EventQueue(client: db.client)
            _ = try await queue.claim(limit: 1, owner: "A", lease: .seconds(30), logger: db.logger)
            try await expireLeases(db)
            #expect(try await queue.rescueExpiredLeases(policy: .init(maximumAttempts: 1), logger: db.logger) == 1)
            #expect(try await state(db, id).state == "dead")
        }
    }

    /// What Apple sends during a replay is claimed before the replay's backlog, which only fills what is left of a
    /// batch: a replay of last month must not make "is this user premium?" stale until it ends.
    @Test func aNotificationArrivingDuringAReplayIsClaimedBeforeTheReplayedEvents() async throws {
        try await TestDatabase.withFresh { db in
            let queue = EventQueue(client: db.client)
            let old = try await append(db, count: 4)
            try await complete(
                db, try await queue.claim(limit: 4, owner: "w", lease: .seconds(30), logger: db.logger).map { ($0, .done) }, owner: "w")
            let replayed = try await OperatorStore(client: db.client).requeue(
                .idRange(old[0].rawValue...old[3].rawValue), action: "replay", by: "test", reason: "projection fix", logger: db.logger
            )
            #expect(replayed == 4)
            let fresh = try await append(db, count: 2)
            #expect(try await queue.claim(limit: 2, owner: "w", lease: .seconds(30), logger: db.logger).map(\.id) == fresh)
            #expect(try await queue.claim(limit: 2, owner: "w", lease: .seconds(30), logger: db.logger).map(\.id) == Array(old[0...1]))
            // A batch with room takes the new notification and fills the rest from the replay, oldest first.
            let newest = try await append(db, count: 1)
            #expect(try await queue.claim(limit: 2, owner: "w", lease: .seconds(30), logger: db.logger).map(\.id) == [old[2]] + newest)
            #expect(try await queue.claim(limit: 10, owner: "w", lease: .seconds(30), logger: db.logger).map(\.id) == [old[3]])
        }
    }

    @Test func finishedEventsLeaveTheClaimIndex() async throws {
        try await TestDatabase.withFresh { db in
            try await append(db, count: 5)
            let queue = EventQueue(client: db.client)
            let claimed = try await queue.claim(limit: 5, owner: "w", lease: .seconds(30), logger: db.logger)
            try await complete(db, claimed.map { ($0, .done) }, owner: "w")
            // The claim index is partial on pending rows: its predicate excludes finished work.
            let definition = try await db.client.query("SELECT pg_get_indexdef('event_queue_ready_idx'::regclass)", logger: db.logger)
            var text = ""
            for try await value in definition.decode(String.self) { text = value }
            #expect(text.contains("WHERE (state = 'pending'::text)"))
            #expect(text.contains("(available_at, event_id)"))
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'pending'") == 0)
        }
    }
}
