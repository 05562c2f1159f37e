import Foundation
package import Logging
import Metrics
package import PostgresNIO
import ServiceLifecycle
import StoreLedgerCore
package import StoreLedgerProcessing
package import StoreLedgerStore

/// The worker: claim loops that run an ``EventHandler`` over the queue, a LISTEN connection that
/// wakes them within milliseconds of an insert, and the lease-rescue and partition sweeps.
///
/// It LISTENs on `listenClient` when given (`DATABASE_LISTEN_URL`), else on `client` where `sessions` are kept
/// whole (``DatabasePooler/keepsSessions``). Behind a transaction pooler without a listen client it does not LISTEN (a
/// LISTEN there would belong to a server session other clients get next) and its loops poll every
/// ``WorkerConfiguration/pollInterval``, which it logs once at start.
///
/// On graceful shutdown (SIGTERM) it stops claiming, finishes the batches in flight, and returns.
package struct WorkerService<Handler: EventHandler>: Service {
    /// The Postgres client (run it as a service in the same group).
    package let client: PostgresClient
    /// The handler every event goes through.
    package let handler: Handler
    /// Loop, lease and retry settings.
    package let configuration: WorkerConfiguration
    /// The logger.
    package let logger: Logger
    /// This process's worker identity; each loop leases as `<id>#<loop>`.
    package let workerID: String
    /// A client for the LISTEN connection alone (`DATABASE_LISTEN_URL`: a direct connection when `client` goes
    /// through a transaction pooler; run it as a service too), or nil to LISTEN on `client` where that works.
    package let listenClient: PostgresClient?
    /// How the claim and completion reach Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions

    private let wake = WakeSignal()
    private let processed = Counter(label: "storeledger_worker_events_total", dimensions: [("outcome", "done")])
    private let retried = Counter(label: "storeledger_worker_events_total", dimensions: [("outcome", "retry")])
    private let rejected = Counter(label: "storeledger_worker_events_total", dimensions: [("outcome", "rejected")])
    private let dead = Counter(label: "storeledger_worker_events_total", dimensions: [("outcome", "dead")])
    private let batchTimer = Timer(label: "storeledger_worker_batch_duration_seconds")
    /// What the server allows a batch's transaction: no lock wait, statement or idle spell longer than the lease.
    private var limits: TransactionLimits { TransactionLimits(lease: configuration.lease) }

    /// Creates a worker; `workerID` defaults to host, pid and a random suffix.
    package init(
        client: PostgresClient,
        handler: Handler,
        configuration: WorkerConfiguration = .init(),
        logger: Logger,
        workerID: String? = nil,
        listenClient: PostgresClient? = nil,
        sessions: DatabaseSessions = DatabaseSessions()
    ) {
        self.sessions = sessions
        self.listenClient = listenClient
        self.client = client
        self.handler = handler
        self.configuration = configuration
        self.logger = logger
        self.workerID = workerID ?? Self.defaultWorkerID()
    }

    /// `host/pid/random`, unique per process.
    static func defaultWorkerID() -> String {
        let host = ProcessInfo.processInfo.hostName
        let suffix = UUID().uuidString.prefix(8).lowercased()
        return "\(host)/\(getpid())/\(suffix)"
    }

    /// Runs until graceful shutdown or cancellation.
    package func run() async throws {
        let queue = EventQueue(client: client, sessions: sessions)
        let stopping = StopFlag()
        let listener = listenClient ?? (sessions.pooler.keepsSessions ? client : nil)
        if listener == nil {
            logger.notice(
                "not listening for new work: DATABASE_POOLER=transaction and no DATABASE_LISTEN_URL; polling instead",
                metadata: ["worker": "\(workerID)", "poll_interval": "\(configuration.pollInterval)"]
            )
        }
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let listener { group.addTask { await listenForNewWork(on: listener, stopping: stopping) } }
                group.addTask { await cancelWhenGracefulShutdown { await sweep(queue: queue, stopping: stopping) } }
                for loop in 0..<max(configuration.concurrency, 1) {
                    group.addTask { await claimLoop(queue: queue, owner: "\(workerID)#\(loop)", stopping: stopping) }
                }
                try await group.waitForAll()
            }
        } onGracefulShutdown: {
            stopping.set()
            wake.signal()
        }
        logger.info("worker stopped", metadata: ["worker": "\(workerID)"])
    }

    /// Claims and processes batches until stopping; a full batch is followed at once by another.
    ///
    /// Neither a claim nor a batch may hold the loop longer than a lease: a statement stuck on a database that
    /// vanished (a crash, a failover behind a moved address) is left behind, its leases expire and are rescued, and
    /// the loop claims again on fresh connections. So a worker always resumes after a database failure.
    private func claimLoop(queue: EventQueue, owner: String, stopping: StopFlag) async {
        var failures = 0
        // Halved after a batch outlives its lease, doubled back after one that does not: the events of a batch that
        // cannot finish in time come back (after the backoff) in batches that can, and a slow event stops taking
        // hundreds of others down with it.
        var batchSize = configuration.batchSize
        while !stopping.isSet && !Task.isCancelled {
            let generation = wake.generation
            let batch: [ClaimedEvent]
            do {
                batch = try await withDeadline(configuration.lease) { [configuration, logger, batchSize] in
                    try await queue.claim(limit: batchSize, owner: owner, lease: configuration.lease, logger: logger)
                }
                failures = 0
            } catch {
                failures += 1
                logger.error("claim failed", metadata: ["worker": "\(owner)", "error": "\(String(reflecting: error))"])
                // Not cut short by new work (a NOTIFY per notification would make it a retry per notification against a
                // database that just failed), only by shutdown.
                await wake.wait(for: Self.claimBackoff(afterFailures: failures), unlessStopped: stopping)
                continue
            }
            if batch.isEmpty {
                await wake.wait(after: generation, timeout: configuration.pollInterval)
                continue
            }
            guard await process(batch, owner: owner, stopping: stopping) else {
                // It ran past its deadline, or its leases were rescued before it committed (the database's clock
                // stepped on): smaller batches for a while, not larger.
                batchSize = max(1, min(batchSize, batch.count) / 2)
                logger.warning(
                    "batch did not finish as a whole within its lease; batches are smaller for a while",
                    metadata: ["worker": "\(owner)", "events": "\(batch.count)", "next_batch_size": "\(batchSize)"])
                continue
            }
            batchSize = min(configuration.batchSize, batchSize * 2)
        }
    }

    /// How long a batch (or one event of it, alone) may take: four fifths of the lease, so that the fifth left lets
    /// its events' leases be renewed before the rescue may take them.
    var deadline: Duration { configuration.lease * 4 / 5 }

    /// How long a claim loop waits after `failures` claims in a row failed: 200 ms doubling to 6.4 s, each drawn
    /// uniformly from its upper half, so that the loops of every worker do not come back to the database at once.
    static func claimBackoff(afterFailures failures: Int) -> Duration {
        let ceiling = 100 * (1 << min(max(failures, 1), 6))
        return .milliseconds(Int.random(in: ceiling / 2...ceiling))
    }

    /// Runs the handler over a claimed batch and records the outcomes in the same transaction, within ``deadline``.
    /// When the batch as a whole fails or runs past its deadline, its events are processed one by one
    /// (``processOneByOne(_:owner:leasedSince:stopping:)``, which `stopping`, the worker's stop flag, ends early), so
    /// that one bad or slow event takes only itself down. A batch left behind at its deadline cannot record anything
    /// twice: its completion is fenced on the same leases. Returns false when the batch did not commit as a whole in
    /// time or its leases were lost (rescued by another worker) before it committed.
    @discardableResult
    func process(_ batch: [ClaimedEvent], owner: String, stopping: StopFlag? = nil) async -> Bool {
        let start = ContinuousClock.now
        let (error, overran): (any Error, Bool)
        switch await attempt(batch, owner: owner) {
        case .committed: return true
        case .leaseLost(let lost):
            logger.warning("batch not completed: lease lost", metadata: ["worker": "\(owner)", "error": "\(lost)"])
            return false
        case .overran(let overrun): (error, overran) = (overrun, true)
        case .failed(let failure): (error, overran) = (failure, false)
        }
        // Stopping (the loop's task cancelled): the leases expire and the events are rescued.
        guard !Task.isCancelled else { return true }
        guard batch.count > 1 else {
            // Alone and past its deadline, it may still be running: its lease expires and the rescue records it.
            if !overran { await recordFailure(batch[0], error: error, owner: owner) }
            return !overran
        }
        logger.warning(
            overran ? "batch ran past its deadline; processing its events one by one" : "batch failed; processing its events one by one",
            metadata: ["worker": "\(owner)", "events": "\(batch.count)", "error": "\(String(reflecting: error))"])
        await processOneByOne(batch, owner: owner, leasedSince: start, stopping: stopping)
        return !overran
    }

    /// How one ``commitWhole(_:owner:)`` of a batch (or of one event) ended.
    private enum Attempt {
        /// Committed, its outcomes recorded.
        case committed
        /// Its leases were rescued before it committed: nothing of it was recorded.
        case leaseLost(StoreError)
        /// Past its deadline: abandoned, perhaps still running.
        case overran(DeadlineExceeded)
        /// It failed: rolled back.
        case failed(any Error)
    }

    /// Commits `batch` whole and says how that ended: the one reading of its errors for a batch and a lone event.
    private func attempt(_ batch: [ClaimedEvent], owner: String) async -> Attempt {
        do {
            try await commitWhole(batch, owner: owner)
            return .committed
        } catch let error as StoreError where error.code == .leaseLost {
            return .leaseLost(error)
        } catch let error as DeadlineExceeded {
            return .overran(error)
        } catch {
            return .failed(error)
        }
    }

    /// Verifies, applies and completes `batch` in one transaction within ``deadline``, and counts its outcomes once
    /// committed (also when that happens after the deadline: the abandoned operation goes on, but stops verifying).
    private func commitWhole(_ batch: [ClaimedEvent], owner: String) async throws {
        let start = ContinuousClock.now
        try await withDeadline(deadline) { [self] in
            var prepared: [Handler.Prepared] = []
            prepared.reserveCapacity(batch.count)
            for event in batch {
                // Past the deadline, the events are verified again one by one: stop spending the CPU on them here.
                try Task.checkCancellation()
                prepared.append(await handler.prepare(event, logger: logger))
            }
            // Effects and outcomes commit together, and count only once the COMMIT said so: an autocommitted
            // completion would report success before its commit, which can still fail.
            let outcomes = try await client.inTransaction(logger: logger, sessions: sessions, limits: limits) { [prepared] connection in
                try await applyAndComplete(prepared, of: batch, owner: owner, on: connection)
            }
            count(outcomes, of: batch)
            batchTimer.record(duration: start.duration(to: .now))
        }
    }

    /// Processes each event of a batch that failed or overran alone, under a deadline of its own, its lease renewed
    /// first (the remaining events' leases, whenever a tenth of a lease has gone by since the last renewal: an event
    /// started then ends within nine tenths of a lease of it). Every event other than a bad or slow one is recorded
    /// on the same attempt with its own outcome, and a failure with its own error, instead of all being rescued as
    /// "lease expired" at the cost of an attempt each. When stopping, or after two events in a row ran past their
    /// deadlines (the database, not an event, is slow), the events not started are handed back (pending at once,
    /// without a backoff) rather than left to run out their leases. A renewal the database does not answer is tried
    /// again while the leases last (a restart of a few seconds), then the rest is left to the rescue. `leasedSince` is
    /// when the batch was claimed, or just after (a tenth of a lease is kept as a margin).
    private func processOneByOne(_ batch: [ClaimedEvent], owner: String, leasedSince: ContinuousClock.Instant, stopping: StopFlag?) async {
        let queue = EventQueue(client: client, sessions: sessions)
        var held: Set<EventID> = []
        var renewed: ContinuousClock.Instant?
        // Until when the leases surely last: while they do, a database that stopped answering (a restart) is asked again.
        var leasedUntil = leasedSince + configuration.lease
        var overrunsInARow = 0
        var index = 0
        while index < batch.count {
            guard !Task.isCancelled else { return }
            let event = batch[index]
            guard stopping?.isSet != true, overrunsInARow < 2 else {
                do {
                    try await withDeadline(deadline) { [configuration, logger, remaining = Array(batch[index...])] in
                        try await queue.release(remaining, owner: owner, lease: configuration.lease, logger: logger)
                    }
                } catch {
                    logger.error("could not hand events back; their leases will expire", metadata: ["error": "\(String(reflecting: error))"])
                }
                return
            }
            if renewed.map({ $0.duration(to: .now) >= configuration.lease / 10 }) ?? true {
                let asked = ContinuousClock.now
                do {
                    held = try await withDeadline(deadline) { [configuration, logger, remaining = Array(batch[index...])] in
                        try await queue.renewLeases(remaining, owner: owner, lease: configuration.lease, logger: logger)
                    }
                    renewed = asked
                    leasedUntil = asked + configuration.lease
                } catch {
                    guard ContinuousClock.now + .seconds(1) < leasedUntil - configuration.lease / 10 else {
                        // The leases run out before the database answers: the rest is left to the lease rescue.
                        logger.error(
                            "could not renew leases; the rest of the batch will be rescued", metadata: ["error": "\(String(reflecting: error))"])
                        return
                    }
                    try? await Task.sleep(for: .milliseconds(500))
                    continue
                }
            }
            index += 1
            // Rescued meanwhile (its lease ran out before it was renewed): another attempt has it.
            guard held.contains(event.id) else { continue }
            switch await attempt([event], owner: owner) {
            case .committed, .leaseLost: overrunsInARow = 0
            case .overran:
                // Still running, perhaps: its lease expires and the rescue records it.
                overrunsInARow += 1
            case .failed(let error):
                overrunsInARow = 0
                guard !Task.isCancelled else { return }
                await recordFailure(event, error: error, owner: owner)
            }
        }
    }

    /// Applies the handler to a prepared batch and records its outcomes, on one connection.
    private func applyAndComplete(
        _ prepared: [Handler.Prepared], of batch: [ClaimedEvent], owner: String, on connection: PostgresConnection
    ) async throws -> [EventOutcome] {
        let outcomes = try await handler.apply(prepared, in: connection, logger: logger)
        guard outcomes.count == batch.count else {
            throw StoreError(.handlerContract, "handler returned \(outcomes.count) outcomes for \(batch.count) events")
        }
        try await EventQueue.complete(
            Array(zip(batch, outcomes)).map { (event: $0.0, outcome: $0.1) },
            owner: owner, policy: configuration.retryPolicy, on: connection, sessions: sessions, logger: logger
        )
        return outcomes
    }

    private func recordFailure(_ event: ClaimedEvent, error: any Error, owner: String) async {
        logger.error(
            "event failed",
            metadata: [
                "worker": "\(owner)", "event": "\(event.id)", "attempt": "\(event.attempt)", "error": "\(String(reflecting: error))",
            ])
        do {
            // Bounded like every step of the loop: a database that vanished must not hold it.
            try await withDeadline(deadline) { [self] in
                try await client.inTransaction(logger: logger, sessions: sessions, limits: limits) { connection in
                    try await EventQueue.complete(
                        // The error's type first: `storeledger stats` groups dead events by the text before the first colon.
                        [(event: event, outcome: .retry(reason: "\(type(of: error)): \(String(reflecting: error))"))],
                        owner: owner, policy: configuration.retryPolicy, on: connection, sessions: sessions, logger: logger
                    )
                }
            }
            configuration.retryPolicy.isExhausted(afterAttempt: event.attempt) ? dead.increment() : retried.increment()
        } catch {
            // The lease will expire and the event will be rescued.
            logger.error(
                "could not record failure; the lease will expire",
                metadata: [
                    "event": "\(event.id)", "error": "\(String(reflecting: error))",
                ])
        }
    }

    private func count(_ outcomes: [EventOutcome], of batch: [ClaimedEvent]) {
        for (event, outcome) in zip(batch, outcomes) {
            switch outcome {
            case .done: processed.increment()
            case .retry: configuration.retryPolicy.isExhausted(afterAttempt: event.attempt) ? dead.increment() : retried.increment()
            case .reject: rejected.increment()
            }
        }
    }

    /// Holds a LISTEN connection of `listener` and wakes the claim loops on every notification; reconnects.
    private func listenForNewWork(on listener: PostgresClient, stopping: StopFlag) async {
        while !stopping.isSet && !Task.isCancelled {
            do {
                try await cancelWhenGracefulShutdown {
                    try await listener.withOpenConnection(logger: logger) { connection in
                        try await connection.listen(on: EventQueue.notificationChannel) { notifications in
                            wake.signal()  // anything inserted while we were not listening
                            for try await _ in notifications { wake.signal() }
                        }
                    }
                }
            } catch {
                if stopping.isSet || Task.isCancelled { return }
                logger.warning("LISTEN connection lost; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Periodically rescues expired leases, looks at the database's history, and creates partitions ahead.
    private func sweep(queue: EventQueue, stopping: StopFlag) async {
        let log = EventLog(client: client, sessions: sessions)
        let history = DatabaseHistory(client: client)
        var lastPartitionCheck: ContinuousClock.Instant?
        // The log's high-water mark as this worker last saw it: lower later, the database was put back in place.
        var highWater: Int64 = 0
        while !stopping.isSet && !Task.isCancelled {
            do {
                let rescued = try await withDeadline(configuration.lease) { [configuration, logger] in
                    try await queue.rescueExpiredLeases(policy: configuration.retryPolicy, lease: configuration.lease, logger: logger)
                }
                if rescued > 0 { wake.signal() }
                if try await withDeadline(configuration.lease, operation: { [logger] in try await history.check(logger: logger) }) {
                    logger.critical(
                        "the database history changed (failover or restore): acknowledged events may be lost; see database_history and docs/operations.md (Failover)"
                    )
                }
                let seen = highWater
                let rewind = try await withDeadline(configuration.lease) { [logger] in try await history.checkRewind(seen: seen, logger: logger) }
                highWater = rewind.highWater
                if rewind.rewound {
                    logger.critical(
                        "the event log went back (a database restored in place): acknowledged events may be lost; see database_history and docs/operations.md (Failover)"
                    )
                }
                if lastPartitionCheck.map({ $0.duration(to: .now) >= configuration.partitionMaintenanceInterval }) ?? true {
                    // Counted as done even when it fails: a try waits up to a second for the log's lock, with every
                    // append queued behind it, and partitions are made months ahead; the next is an interval later.
                    lastPartitionCheck = .now
                    // Bounded like the rest: a database gone silent must not stop this loop's lease rescue for good.
                    let created = try await withDeadline(configuration.lease) { [logger] in try await log.ensurePartitions(logger: logger) }
                    if created > 0 { logger.info("created event partitions", metadata: ["count": "\(created)"]) }
                    let partitions = EventPartitions(client: client)
                    let defaultHoldsEvents = try await withDeadline(configuration.lease) { [logger] in
                        try await partitions.defaultPartitionHoldsEvents(logger: logger)
                    }
                    if defaultHoldsEvents {
                        logger.error(
                            "events_default holds events: a month's partition was not created in time, so that month has none (later months are created); see docs/operations.md (The event log)"
                        )
                    }
                }
            } catch {
                logger.warning("sweep failed", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await Task.sleep(for: configuration.rescueInterval)
        }
    }
}
