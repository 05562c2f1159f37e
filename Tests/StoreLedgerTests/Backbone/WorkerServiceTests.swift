import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerServer
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Synchronization
import Testing

/// The events a handler was given, shared across its copies.
final class SeenEvents: Sendable {
    let value = Mutex<[EventID]>([])
}

/// A gate a handler waits at until the test opens it.
final class Gate: Sendable {
    /// Whether it is open.
    let isOpen = Mutex(false)
    /// How many events have arrived at it.
    let arrived = Mutex(0)

    /// Opens it for good.
    func open() { isOpen.withLock { $0 = true } }

    /// Waits (polling) until it is open.
    func pass() async {
        arrived.withLock { $0 += 1 }
        await pollIgnoringCancellation(every: .milliseconds(10)) { self.isOpen.withLock { $0 } }
    }
}

/// A handler whose behaviour the test scripts: a delay per event, a gate every event waits at, and bodies whose
/// batch fails.
struct ScriptedHandler: EventHandler {
    var delay: Duration = .zero
    var gate: Gate? = nil
    var poison: String? = nil
    let seen = SeenEvents()

    func prepare(_ event: ClaimedEvent, logger: Logger) async -> ClaimedEvent {
        await gate?.pass()
        if delay > .zero { try? await Task.sleep(for: delay) }
        seen.value.withLock { $0.append(event.id) }
        return event
    }

    func apply(_ batch: [ClaimedEvent], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        if let poison, batch.contains(where: { String(buffer: $0.body).contains(poison) }) {
            throw StoreError(.unavailable, "simulated database failure")
        }
        return batch.map { _ in .done }
    }
}

/// A handler whose every event (or, with `only`, every event whose body contains it) takes `perEvent` to prepare, and
/// does not stop when its task is cancelled (as a statement the database holds does not).
struct SlowHandler: EventHandler {
    /// How long each event takes.
    let perEvent: Duration
    /// When set, only events whose body contains it are slow.
    var only: String? = nil

    func prepare(_ event: ClaimedEvent, logger: Logger) async -> ClaimedEvent {
        if let only, !String(buffer: event.body).contains(only) { return event }
        let until = ContinuousClock.now + perEvent
        await pollIgnoringCancellation(every: .milliseconds(20)) { ContinuousClock.now >= until }
        return event
    }

    func apply(_ batch: [ClaimedEvent], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        batch.map { _ in .done }
    }
}

@Suite("Worker service")
struct WorkerServiceTests {
    static let envelope = #"{"signedPayload":"a.b.c"}"#

    @discardableResult
    func append(_ db: TestDatabase, _ bodies: [String]) async throws -> [EventID] {
        var ids: [EventID] = []
        for body in bodies {
            ids.append(
                try await EventLog(client: db.client).append(NewEvent(source: .appleNotification, body: ByteBuffer(string: body)), logger: db.logger)
                    .id)
        }
        return ids
    }

    func count(_ db: TestDatabase, _ state: QueueState) async throws -> Int {
        try await db.scalar("SELECT count(*) FROM event_queue WHERE state = \(state.rawValue)")
    }

    /// Runs `worker` in a service group while `body` runs, then shuts it down gracefully.
    func running<Handler: EventHandler>(_ worker: WorkerService<Handler>, _ body: (ServiceGroup) async throws -> Void) async throws {
        let group = ServiceGroup(configuration: .init(services: [.init(service: worker)], logger: TestDatabase.makeLogger()))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body(group)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func processesGoodEventsAndRejectsMalformedOnes() async throws {
        try await TestDatabase.withFresh { db in
            try await append(db, Array(repeating: Self.envelope, count: 30) + ["{\"nope\":1}", "garbage"])
            let worker = WorkerService(client: db.client, handler: EnvelopeHandler(), configuration: .init(batchSize: 7), logger: db.logger)
            try await running(worker) { _ in
                let settled = try await eventually {
                    let done = try await count(db, .done)
                    let rejected = try await count(db, .rejected)
                    return done == 30 && rejected == 2
                }
                #expect(settled)
            }
            let reasons = try await db.client.query("SELECT reject_reason FROM event_queue WHERE state = 'rejected'", logger: db.logger)
            for try await reason in reasons.decode(String.self) { #expect(reason.contains("malformed envelope")) }
            #expect(try await count(db, .pending) == 0)
            #expect(try await count(db, .processing) == 0)
        }
    }

    @Test func anIdleWorkerWakesOnInsertWithoutWaitingForThePoll() async throws {
        try await TestDatabase.withFresh { db in
            let worker = WorkerService(
                client: db.client, handler: EnvelopeHandler(),
                configuration: .init(concurrency: 1, pollInterval: .seconds(600), rescueInterval: .seconds(600)),
                logger: db.logger
            )
            try await running(worker) { _ in
                try await Task.sleep(for: .milliseconds(500))  // the loop has found nothing and sleeps
                try await append(db, [Self.envelope])
                // The poll is 10 minutes: only LISTEN/NOTIFY (or, inserted before the LISTEN began, the wake-up that
                // follows it) can finish this in time; 30 s leaves a loaded machine room and is still far from the poll.
                let settled = try await eventually(within: .seconds(30)) { try await count(db, .done) == 1 }
                #expect(settled)
            }
        }
    }

    @Test func gracefulShutdownFinishesTheBatchInFlightAndClaimsNoMore() async throws {
        try await TestDatabase.withFresh { db in
            try await append(db, Array(repeating: Self.envelope, count: 4))
            // The batch is held at the gate until shutdown has begun, however slow the machine: no race with a timer.
            let gate = Gate()
            let handler = ScriptedHandler(gate: gate)
            let worker = WorkerService(client: db.client, handler: handler, configuration: .init(concurrency: 1, batchSize: 4), logger: db.logger)
            try await running(worker) { group in
                let settled = try await eventually { gate.arrived.withLock { $0 > 0 } }
                #expect(settled)
                try await append(db, [Self.envelope])  // arrives during the batch: must not be claimed after shutdown
                await group.triggerGracefulShutdown()
                gate.open()
            }
            #expect(try await count(db, .done) == 4)
            #expect(try await count(db, .processing) == 0)
            #expect(try await count(db, .pending) == 1)
        }
    }

    @Test func oneFailingEventDoesNotHoldBackItsBatch() async throws {
        try await TestDatabase.withFresh { db in
            let ids = try await append(db, [Self.envelope, #"{"signedPayload":"poison"}"#, Self.envelope, Self.envelope])
            let worker = WorkerService(
                client: db.client, handler: ScriptedHandler(poison: "poison"),
                configuration: .init(concurrency: 1, batchSize: 10), logger: db.logger
            )
            try await running(worker) { _ in
                let settled = try await eventually { try await count(db, .done) == 3 }
                #expect(settled)
            }
            // The poisoned event failed on its own (retried with its error kept), and only it.
            let failures = try await db.scalar(
                "SELECT count(*) FROM event_attempt_errors WHERE event_id = \(ids[1].rawValue) AND outcome = 'retry' AND error LIKE '%simulated database failure%'"
            )
            #expect(failures >= 1)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE event_id <> \(ids[1].rawValue)") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(ids[1].rawValue) AND state <> 'done'") == 1)
        }
    }

    /// One claim loop over `handler` with a 10 s lease (a batch's deadline 8 s, which leaves the lease renewals two
    /// seconds' slack on a loaded machine), polling every 0.1 s and rescuing expired leases every 0.2 s, retries at
    /// most 0.5 s apart: the timing the tests of slow batches share.
    func slowWorker(_ db: TestDatabase, _ handler: SlowHandler, batchSize: Int, maximumAttempts: Int = 20) -> WorkerService<SlowHandler> {
        WorkerService(
            client: db.client, handler: handler,
            configuration: .init(
                concurrency: 1, batchSize: batchSize, lease: .seconds(10), pollInterval: .milliseconds(100), rescueInterval: .milliseconds(200),
                retryPolicy: RetryPolicy(maximumAttempts: maximumAttempts, maximumDelay: 0.5)),
            logger: db.logger
        )
    }

    /// A batch that cannot finish within its lease (each event takes 1.6 s, whatever the deadline says; 8 of them take
    /// 12.8 s against a 10 s lease, whose deadline is 8 s) does not cost its events an attempt each: past its deadline,
    /// each event is processed alone with its lease renewed, and every one ends done on its first attempt, none
    /// rescued. Before, all eight were rescued as "lease expired" and came back after a backoff.
    @Test func aBatchThatOutlivesItsLeaseIsFinishedOneByOne() async throws {
        try await TestDatabase.withFresh { db in
            try await append(db, Array(repeating: Self.envelope, count: 8))
            let worker = slowWorker(db, SlowHandler(perEvent: .milliseconds(1600)), batchSize: 8, maximumAttempts: 8)
            try await running(worker) { _ in
                let settled = try await eventually(within: .seconds(90)) {
                    try await count(db, .done) + count(db, .dead) == 8
                }
                #expect(settled)
            }
            #expect(try await count(db, .done) == 8)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE attempts > 1") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors") == 0)
        }
    }

    /// One event too slow for any deadline (14 s against a 10 s lease, whose deadline is 8 s) in a batch of five takes
    /// only itself down: the four others are done on their first attempt, with no error recorded; it alone is rescued
    /// ("lease expired") and tried again, as many times as it takes.
    @Test func aSlowEventTakesOnlyItselfDownWithItsBatch() async throws {
        try await TestDatabase.withFresh { db in
            let ids = try await append(db, [Self.envelope, Self.envelope, #"{"signedPayload":"slow"}"#, Self.envelope, Self.envelope])
            let worker = slowWorker(db, SlowHandler(perEvent: .seconds(14), only: "slow"), batchSize: 5)
            try await running(worker) { _ in
                let rescued = try await eventually(within: .seconds(90)) {
                    let expired = try await db.scalar(
                        "SELECT count(*) FROM event_attempt_errors WHERE event_id = \(ids[2].rawValue) AND outcome = 'lease_expired'")
                    return try await count(db, .done) == 4 && expired >= 1
                }
                #expect(rescued)
            }
            #expect(
                try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id <> \(ids[2].rawValue) AND state = 'done' AND attempts = 1") == 4)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE event_id <> \(ids[2].rawValue)") == 0)
        }
    }

    /// When two events in a row run past their own deadlines (the database, not one event, is slow), the events of the
    /// batch not started yet are handed back at once, pending with no error and no backoff, rather than left to run out
    /// their leases; they are then done on their next attempt.
    @Test func afterTwoSlowEventsInARowTheRestOfTheBatchIsHandedBack() async throws {
        try await TestDatabase.withFresh { db in
            let ids = try await append(db, [#"{"signedPayload":"slow-1"}"#, #"{"signedPayload":"slow-2"}"#, Self.envelope, Self.envelope])
            let worker = slowWorker(db, SlowHandler(perEvent: .seconds(12), only: "slow"), batchSize: 4)
            let good = "\(ids[2].rawValue), \(ids[3].rawValue)"
            try await running(worker) { _ in
                let done = try await eventually(within: .seconds(90)) {
                    try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id IN (\(unescaped: good)) AND state = 'done'") == 2
                }
                #expect(done)
            }
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id IN (\(unescaped: good)) AND attempts = 2") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE event_id IN (\(unescaped: good))") == 0)
        }
    }

    @Test func aCrashedWorkersEventIsRescuedAndFinishedByAnother() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await append(db, [Self.envelope])[0]
            // A worker claims it and dies without a word.
            _ = try await EventQueue(client: db.client).claim(limit: 1, owner: "crashed#0", lease: .seconds(1), logger: db.logger)
            let worker = WorkerService(
                client: db.client, handler: EnvelopeHandler(),
                configuration: .init(concurrency: 1, rescueInterval: .milliseconds(200)), logger: db.logger
            )
            try await running(worker) { _ in
                let settled = try await eventually { try await count(db, .done) == 1 }
                #expect(settled)
            }
            #expect(try await db.scalar("SELECT attempts FROM event_queue WHERE event_id = \(id.rawValue)") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE outcome = 'lease_expired'") == 1)
        }
    }

    @Test func twoWorkerProcessesShareTheQueueWithoutDoubleProcessing() async throws {
        try await TestDatabase.withFresh(maximumConnections: 12) { db in
            try await append(db, Array(repeating: Self.envelope, count: 200))
            let first = ScriptedHandler()
            let second = ScriptedHandler()
            let a = WorkerService(
                client: db.client, handler: first, configuration: .init(concurrency: 2, batchSize: 5), logger: db.logger, workerID: "a")
            let b = WorkerService(
                client: db.client, handler: second, configuration: .init(concurrency: 2, batchSize: 5), logger: db.logger, workerID: "b")
            try await running(a) { _ in
                try await running(b) { _ in
                    let settled = try await eventually { try await count(db, .done) == 200 }
                    #expect(settled)
                }
            }
            let seenA = first.seen.value.withLock { $0 }
            let seenB = second.seen.value.withLock { $0 }
            #expect(seenA.count + seenB.count == 200)
            #expect(Set(seenA).isDisjoint(with: Set(seenB)))
        }
    }

    @Test func theWorkerRefusesToStartOnAStaleSchema() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            let migrator = Migrator(migrations: try Migration.bundled())
            let worker = ServiceAfterPreflight(
                WorkerService(client: db.client, handler: EnvelopeHandler(), logger: db.logger),
                after: { try await migrator.requireCurrent(client: db.client, logger: db.logger) }
            )
            let error = await #expect(throws: StoreError.self) { try await worker.run() }
            #expect(error?.code == .schemaBehind)
        }
    }
}
