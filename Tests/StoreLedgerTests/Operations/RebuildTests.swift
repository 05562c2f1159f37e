import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization
import Testing

@Suite("Rebuild: replay the log into shadow tables, catch up, swap")
struct RebuildTests {
    /// A table that lists as many differences as are listed per table may have more: the report says so, so that the
    /// dry run prints "at least" rather than a count that is only the listing's limit.
    @Test func aReportWhoseTableFilledItsListingIsCapped() {
        func report(_ counts: [String: Int]) -> RebuildReport {
            let differences = counts.flatMap { table, count in
                (0..<count).map { ShadowSchema.Difference(table: table, change: "changed", key: "{\"k\": \($0)}") }
            }
            return RebuildReport(eventsReplayed: 0, eventsRejected: 0, differences: differences, rowsChanged: [:], swapped: false)
        }
        let limit = ShadowSchema.differencesListedPerTable
        #expect(!report(["subscriptions": limit - 1, "purchases": limit - 1]).differencesAreCapped)
        #expect(report(["subscriptions": 3, "purchases": limit]).differencesAreCapped)
    }

    static let pki = try! TestPKI()

    /// Every lifecycle's facts (subscriptions and one-time purchases), in a fixed shuffled order, some twice.
    static func workload() -> [LedgerFact] {
        var facts = SubscriptionLifecycles.all(includesStatus: true).flatMap(\.builder.facts) + PurchaseLifecycles.all().facts
        var generator = SplitMix64(seed: 20_261_123)
        facts.shuffle(using: &generator)
        return facts + facts.prefix(7)
    }

    /// All derived rows (facts and read model) as sorted JSON lines without bookkeeping columns.
    static func derived(_ db: TestDatabase) async throws -> [String] {
        var lines: [String] = []
        for table in ShadowSchema.reportedTables {
            let ignored = table.ignored.map { "'\($0)'" }.joined(separator: ",")
            let rows = try await db.client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT '\(table.name) ' || (to_jsonb(t) - ARRAY[\(ignored)]::text[])::text FROM \(table.name) t ORDER BY 1"),
                logger: db.logger
            )
            for try await line in rows.decode(String.self) { lines.append(line) }
        }
        return lines
    }

    /// A pipeline on `db` that processed the whole workload, and the derived rows it left.
    static func healthyLedger(_ db: TestDatabase) async throws -> (LedgerPipeline, [String]) {
        let pipeline = try LedgerPipeline(db, pki: pki)
        try await pipeline.append(workload())
        try await pipeline.drain()
        let healthy = try await derived(db)
        #expect(healthy.count > 20)
        return (pipeline, healthy)
    }

    /// Expects `db`'s facts and read model to equal those of a ledger that processed `facts` in one go from scratch
    /// (notification rows aside: each keeps the event of its first delivery), every notification event to be one
    /// delivery, recorded once, and a dry run to find nothing to change.
    func expectSameAsFromScratch(_ db: TestDatabase, _ pipeline: LedgerPipeline, facts: [LedgerFact]) async throws {
        let expected = try await TestDatabase.withFresh { fresh in
            let reference = try LedgerPipeline(fresh, pki: Self.pki)
            try await reference.append(facts)
            try await reference.drain()
            return try await Self.derived(fresh)
        }
        #expect(
            try await Self.derived(db).filter { !$0.hasPrefix("notification_deliveries") && !$0.hasPrefix("notifications") }
                == expected.filter { !$0.hasPrefix("notification_deliveries") && !$0.hasPrefix("notifications") })
        let notificationEvents = try await db.scalar("SELECT count(*) FROM events WHERE source = 'apple_notification'")
        #expect(try await db.scalar("SELECT count(*) FROM notification_deliveries") == notificationEvents)
        #expect(try await rebuilder(pipeline).run(dryRun: true, logger: db.logger).differences.isEmpty)
    }

    func rebuilder(_ pipeline: LedgerPipeline, batchSize: Int = 13) -> Rebuilder {
        Rebuilder(client: pipeline.db.client, handler: pipeline.handler, batchSize: batchSize, catchUpThreshold: 5)
    }

    @Test func aRebuildEqualsTheLiveStateAndRepairsWhateverWasDamaged() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)

            let clean = try await rebuilder(pipeline).run(dryRun: true, logger: db.logger)
            #expect(clean.differences.isEmpty)
            #expect(clean.eventsReplayed == Self.workload().count)

            // Damage: a wrong status, a lost purchase, an invented subscription, a lost fact.
            try await db.client.query(
                "UPDATE subscriptions SET status = 'revoked', entitled = false WHERE original_transaction_id = (SELECT min(original_transaction_id) FROM subscriptions)",
                logger: db.logger)
            try await db.client.query("DELETE FROM purchases WHERE transaction_id = (SELECT min(transaction_id) FROM purchases)", logger: db.logger)
            try await db.client.query(
                "INSERT INTO subscriptions (environment, original_transaction_id, status, entitled) VALUES ('Sandbox', 'bogus', 'active', true)",
                logger: db.logger)
            try await db.client.query(
                "DELETE FROM renewal_infos WHERE fact_sha256 = (SELECT fact_sha256 FROM renewal_infos ORDER BY fact_sha256 LIMIT 1)",
                logger: db.logger)

            // The console's chart snapshot, taken now, is current until the swap changes what it was taken from.
            let charts = ChartStore(client: db.client)
            _ = try await charts.refresh(logger: db.logger)
            #expect(try await charts.snapshot(logger: db.logger).behind == false)
            let dryRun = try await rebuilder(pipeline).run(dryRun: true, logger: db.logger)
            #expect(try await charts.snapshot(logger: db.logger).behind == false, "a dry run changes nothing")
            #expect(
                Set(dryRun.differences.map { "\($0.table) \($0.change)" }) == [
                    "subscriptions changed", "purchases added", "subscriptions removed", "renewal_infos added",
                ])
            #expect(try await Self.derived(db) != healthy)
            #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)

            let lines = Mutex<[String]>([])
            let repaired = try await rebuilder(pipeline).run(
                dryRun: false, logger: db.logger, progress: { progress in lines.withLock { $0.append(progress.line) } })
            #expect(repaired.swapped)
            #expect(repaired.rowsChanged.values.reduce(0, +) == 4)
            #expect(try await charts.snapshot(logger: db.logger).behind, "the charts say they are out of date after a swap")
            #expect(try await Self.derived(db) == healthy)
            #expect(lines.withLock { $0 }.contains { $0.hasPrefix("replay: ") && $0.contains("/s") && $0.contains("ETA") })
            #expect(lines.withLock { $0 }.last?.hasPrefix("swap: \(Self.workload().count)/") == true)
        }
    }

    @Test func eventsArrivingDuringARebuildAreNeitherLostNorAppliedTwice() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = Self.workload()
            let half = facts.count / 2
            try await pipeline.append(Array(facts[..<half]))
            try await pipeline.drain()
            let rest = Array(facts[half...])
            let report = try await rebuilder(pipeline).run(
                dryRun: false, logger: db.logger,
                beforeSwap: {
                    // Workers go on during the rebuild: most of the rest arrives and is processed live…
                    try await pipeline.append(Array(rest.dropLast(3)))
                    try await pipeline.drain()
                    // …and the last few arrive right before the swap, still unprocessed.
                    try await pipeline.append(Array(rest.suffix(3)))
                })
            #expect(report.eventsReplayed == facts.count)
            try await pipeline.drain()

            // The result equals a ledger that processed everything in one go, from scratch.
            try await expectSameAsFromScratch(db, pipeline, facts: facts)
            let notificationEvents = try await db.scalar("SELECT count(*) FROM events WHERE source = 'apple_notification'")
            #expect(try await db.scalar("SELECT sum(delivery_count)::int8 FROM notifications") == notificationEvents)
        }
    }
}

extension RebuildTests {
    /// A rebuild that stalls inside its swap (a paused VM, a stopped process) holds every worker's claims off only
    /// until its transaction's idle limit: the server ends the session, its locks go, and workers go on. Before, the
    /// swap had no limits, and workers waited until TCP gave up on the session, hours later, or never.
    @Test func aSwapThatStallsIsEndedByTheServerAndWorkersGoOn() async throws {
        /// Thrown by the stalled swap once the stall is over.
        struct StallOver: Error {}
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = Self.workload()
            try await pipeline.append(Array(facts.dropLast()))
            try await pipeline.drain()
            let limits = TransactionLimits(lockWait: .seconds(10), statement: .seconds(60), idle: .seconds(1))
            let stalling = Rebuilder(client: db.client, handler: pipeline.handler, batchSize: 13, transactionLimits: limits)
            let locked = AnsweredFlag()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await #expect(throws: (any Error).self) {
                        _ = try await stalling.run(
                            dryRun: false, logger: db.logger,
                            duringSwap: {
                                locked.set()
                                // Stalled for 15 s; then it gives up rather than write to a session the server ended.
                                try await Task.sleep(for: .seconds(15))
                                throw StallOver()
                            })
                    }
                }
                #expect(try await eventually(within: .seconds(20)) { locked.isSet })
                // While the swap holds the live tables, a worker claims nothing; once the server ends the stalled
                // session (1 s idle), the new event is processed, long before the stall is over.
                try await pipeline.append(Array(facts.suffix(1)))
                let processed = try await eventually(within: .seconds(8), every: .milliseconds(100)) {
                    try await pipeline.drain()
                    return try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == facts.count
                }
                #expect(processed, "the worker waited for the stalled swap")
                try await group.waitForAll()
            }
            try await expectSameAsFromScratch(db, pipeline, facts: facts)
        }
    }

    /// A swap that cannot take the live tables within its lock limit (a long transaction, a VACUUM holding one) keeps
    /// its shadow, catches up and tries again, rather than throw away the whole replay.
    @Test func aSwapThatCannotLockInTimeIsTriedAgainWithItsShadowKept() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = Self.workload()
            try await pipeline.append(facts)
            try await pipeline.drain()
            // The replay's batches, which wait for each other's subscription locks, keep a longer limit than the swap.
            let limits = TransactionLimits(lockWait: .seconds(10), statement: .seconds(60), idle: .seconds(60))
            let rebuilder = Rebuilder(
                client: db.client, handler: pipeline.handler, batchSize: 13, transactionLimits: limits, swapLockWait: .milliseconds(500),
                swapRetryPause: .milliseconds(500))
            let swapped = Mutex(0)
            let holder = Mutex<Task<Void, any Error>?>(nil)
            let report = try await rebuilder.run(
                dryRun: false, logger: db.logger,
                beforeSwap: {
                    // Held for 5 s from just before the swap, past two of its lock waits with their pauses.
                    holder.withLock {
                        $0 = Task {
                            try await db.withTableLocked("subscriptions", mode: "SHARE UPDATE EXCLUSIVE") { try await Task.sleep(for: .seconds(5)) }
                        }
                    }
                    let held = try await eventually(within: .seconds(10), every: .milliseconds(10)) {
                        try await db.scalar(
                            "SELECT count(*) FROM pg_locks WHERE relation = 'subscriptions'::regclass AND mode = 'ShareUpdateExclusiveLock' AND granted"
                        ) == 1
                    }
                    #expect(held)
                },
                duringSwap: { swapped.withLock { $0 += 1 } })
            try await holder.withLock { $0 }?.value
            #expect(report.swapped)
            #expect(report.eventsReplayed == facts.count)
            #expect(swapped.withLock { $0 } == 1, "only the attempt that took the locks gets past them")
            try await expectSameAsFromScratch(db, pipeline, facts: facts)
        }
    }

    /// The queue's `done` rows may be pruned (docs/operations.md); the verified facts they led to stay, and a rebuild
    /// that cannot verify their events must still refuse to drop them: the swap reads what it would remove from the
    /// ledger itself.
    @Test func aRebuildRefusesToDropVerifiedFactsWhoseQueueRowsWerePruned() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
            try await pipeline.drain()
            try await db.client.query("DELETE FROM event_queue WHERE state = 'done'", logger: db.logger).readToEnd()
            let before = try await Self.derived(db)
            let otherTrust = try LedgerPipeline(db, pki: try TestPKI())
            let refused = await #expect(throws: RebuildError.self) {
                _ = try await Rebuilder(client: db.client, handler: otherTrust.handler).run(dryRun: false, logger: db.logger)
            }
            #expect(refused?.code == .newRejections)
            #expect(refused?.detail.contains("the swap would remove") == true, "\(String(describing: refused))")
            #expect(try await Self.derived(db) == before)
            #expect(try await db.scalar("SELECT count(*) FROM notification_deliveries") > 0)
            let forced = try await Rebuilder(client: db.client, handler: otherTrust.handler, acceptNewRejections: true).run(
                dryRun: false, logger: db.logger)
            #expect(forced.swapped)
            #expect(try await db.scalar("SELECT count(*) FROM notification_deliveries") == 0)
        }
    }

    @Test func aRebuildWithOtherTrustThanTheWorkersRefusesToDropVerifiedFacts() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
            try await pipeline.drain()
            let before = try await Self.derived(db)
            let otherTrust = try LedgerPipeline(db, pki: try TestPKI())
            await #expect {
                _ = try await Rebuilder(client: db.client, handler: otherTrust.handler).run(dryRun: false, logger: db.logger)
            } throws: { error in
                // Stopped at the replay's first page, it names the ways on.
                let detail = (error as? RebuildError)?.detail ?? ""
                return (error as? RebuildError)?.code == .newRejections && detail.contains("--accept-new-rejections")
                    && detail.contains("--dry-run")
            }
            #expect(try await Self.derived(db) == before)
            #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)
            // A dry run, the way to see what removing a trusted root would do, goes on and lists it (the swap's check warns).
            let preview = try await Rebuilder(client: db.client, handler: otherTrust.handler).run(dryRun: true, logger: db.logger)
            #expect(!preview.swapped && !preview.differences.isEmpty)
            #expect(preview.eventsRejected == SubscriptionLifecycles.renewThenExpire().facts.count)
            #expect(try await Self.derived(db) == before)
            let forced = try await Rebuilder(client: db.client, handler: otherTrust.handler, acceptNewRejections: true).run(
                dryRun: true, logger: db.logger)
            #expect(forced.eventsRejected == SubscriptionLifecycles.renewThenExpire().facts.count)
            #expect(!forced.differences.isEmpty)
        }
    }
}

extension RebuildTests {
    @Test func aPostgresCrashThatEmptiesTheUnloggedShadowStopsTheSwapAndLeavesTheLiveTablesAlone() async throws {
        try await ThrowawayCluster.withRunning { cluster in
            try await TestDatabase.withFresh(server: cluster.url) { db in
                let (pipeline, healthy) = try await Self.healthyLedger(db)

                let persistence = Mutex<[(table: String, kind: String)]>([])
                await #expect {
                    _ = try await rebuilder(pipeline).run(
                        dryRun: false, logger: db.logger,
                        beforeSwap: {
                            // The whole log is in the shadow now; the crash empties its unlogged tables.
                            for try await (table, kind) in try await db.client.query(
                                """
                                SELECT relname::text, relpersistence::text FROM pg_class
                                WHERE relnamespace = \(ShadowSchema.name)::regnamespace AND relkind = 'r'
                                """,
                                logger: db.logger
                            ).decode((String, String).self) { persistence.withLock { $0.append((table, kind)) } }
                            try await cluster.crash()
                            try await cluster.restart()
                        })
                } throws: { ($0 as? RebuildError)?.code == .shadowLost }

                // Every shadow table was unlogged; nothing reached the live tables; the shadow is gone.
                #expect(Set(persistence.withLock { $0 }.map(\.table)) == Set(ShadowSchema.tables.map(\.name) + [ShadowSchema.intactTable]))
                #expect(Set(persistence.withLock { $0 }.map(\.kind)) == ["u"])
                #expect(try await Self.derived(db) == healthy)
                #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)
                // Run again, it rebuilds the same state.
                let again = try await rebuilder(pipeline).run(dryRun: false, logger: db.logger)
                #expect(again.swapped && again.differences.isEmpty && again.eventsReplayed == Self.workload().count)
                #expect(try await Self.derived(db) == healthy)
            }
        }
    }
}

extension RebuildTests {
    @Test func aRebuildStartedDuringAnotherReplacesItsShadowAndTheEarlierOneSwapsNothing() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)
            // Damage a row, so that a swap has something to write.
            try await db.client.query("DELETE FROM purchases WHERE transaction_id = (SELECT min(transaction_id) FROM purchases)", logger: db.logger)

            let later = Mutex<[RebuildReport]>([])
            await #expect {
                _ = try await rebuilder(pipeline).run(
                    dryRun: false, logger: db.logger,
                    beforeSwap: {
                        // A second rebuild starts after the first replayed everything, replaces its shadow and finishes.
                        let report = try await rebuilder(pipeline).run(dryRun: false, logger: db.logger)
                        later.withLock { $0.append(report) }
                    })
            } throws: { ($0 as? RebuildError)?.code == .shadowReplaced }
            let reports = later.withLock { $0 }
            #expect(reports.count == 1 && reports.first?.swapped == true)
            #expect(reports.first?.rowsChanged["purchases"] == 1)
            #expect(try await Self.derived(db) == healthy)
            #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)
        }
    }

    @Test func aRebuildWhoseShadowAnotherHasJustReplacedSwapsNothing() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)
            let other = UUID()
            await #expect {
                _ = try await rebuilder(pipeline).run(
                    dryRun: false, logger: db.logger,
                    beforeSwap: {
                        // Another rebuild has just started: its shadow is still empty.
                        try await db.client.withConnection { try await ShadowSchema.create(for: other, on: $0, logger: db.logger) }
                    })
            } throws: { ($0 as? RebuildError)?.code == .shadowReplaced }
            #expect(try await Self.derived(db) == healthy)
            // The replaced rebuild left the other's shadow alone.
            #expect(try await db.client.withConnection { try await ShadowSchema.holder(for: other, on: $0, logger: db.logger) } == .this)
        }
    }

    @Test func theShadowKnowsWhichRebuildHoldsItAndIsDroppedOnlyByThatOne() async throws {
        try await TestDatabase.withFresh { db in
            let (first, second) = (UUID(), UUID())
            try await db.client.withConnection { connection in
                try await ShadowSchema.create(for: first, on: connection, logger: db.logger)
                #expect(try await ShadowSchema.holder(for: first, on: connection, logger: db.logger) == .this)
                try await ShadowSchema.create(for: second, on: connection, logger: db.logger)
                #expect(try await ShadowSchema.holder(for: first, on: connection, logger: db.logger) == .another)
                #expect(try await ShadowSchema.holder(for: second, on: connection, logger: db.logger) == .this)
                // The replaced rebuild's clean-up leaves the other's shadow alone; the holder's drops it.
                try await ShadowSchema.drop(ifHeldBy: first, on: connection, logger: db.logger)
                #expect(try await ShadowSchema.holder(for: second, on: connection, logger: db.logger) == .this)
                try await connection.query("DELETE FROM \(unescaped: ShadowSchema.name).\(unescaped: ShadowSchema.intactTable)", logger: db.logger)
                #expect(try await ShadowSchema.holder(for: second, on: connection, logger: db.logger) == .emptied)
                try await ShadowSchema.drop(ifHeldBy: first, on: connection, logger: db.logger)
                #expect(try await ShadowSchema.holder(for: second, on: connection, logger: db.logger) == .another)
                try await ShadowSchema.create(for: second, on: connection, logger: db.logger)
                try await ShadowSchema.drop(ifHeldBy: second, on: connection, logger: db.logger)
                #expect(try await ShadowSchema.holder(for: second, on: connection, logger: db.logger) == .another)
            }
            #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)
        }
    }

    /// An id is drawn when an append starts, not when it commits: an event can commit after a later one, once the rebuild
    /// has read past its id, and a worker can apply it before the swap. The swap must still hold it, or merging the
    /// shadow would delete what the worker wrote.
    @Test func anEventCommittedAfterALaterOneIsInTheSwapToo() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = Self.workload()
            let middle = facts.count / 2
            try await pipeline.append(Array(facts[..<middle]))
            try await pipeline.drain()

            // The middle fact's append draws its id and waits, uncommitted, while the rest are appended and committed.
            let late = try pipeline.signer.signedEvent(for: facts[middle])
            let (appended, appendedSignal) = AsyncStream<Void>.makeStream()
            let (release, releaseSignal) = AsyncStream<Void>.makeStream()
            let held = Task {
                defer { appendedSignal.finish() }  // a failed append ends the wait below instead of holding it for ever
                try await db.client.inTransaction(logger: db.logger) { connection in
                    _ = try await EventLog.append(
                        NewEvent(source: late.source, body: ByteBuffer(string: late.body)), on: connection, sessions: DatabaseSessions(),
                        logger: db.logger)
                    appendedSignal.yield()
                    for await _ in release { break }
                }
            }
            for await _ in appended { break }
            try await pipeline.append(Array(facts[(middle + 1)...]))
            try await pipeline.drain()

            let report = try await rebuilder(pipeline).run(
                dryRun: false, logger: db.logger,
                beforeSwap: {
                    // The rebuild has read past it; now it commits, and a worker applies it before the swap.
                    releaseSignal.yield()
                    try await held.value
                    try await pipeline.drain()
                })
            #expect(report.eventsReplayed == facts.count)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state <> 'done'") == 0)

            try await expectSameAsFromScratch(db, pipeline, facts: facts)
        }
    }

    /// While a swap holds the live tables, a claim takes nothing: a batch claimed then would only wait for the swap,
    /// past its lease perhaps, holding a connection and spending an attempt, and so would every claim after it. Events
    /// an operator requeued (read by a scan of their own) wait too.
    @Test func whileTheSwapHoldsTheLiveTablesWorkersClaimNothing() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(Array(Self.workload().prefix(3)))
            let queue = EventQueue(client: db.client)
            try await db.client.inTransaction(logger: db.logger) { connection in
                try await ShadowSchema.lockLiveTables(on: connection, logger: db.logger)
                #expect(try await queue.claim(limit: 10, owner: "test", lease: .seconds(60), logger: db.logger).isEmpty)
            }
            #expect(try await queue.claim(limit: 10, owner: "test", lease: .seconds(60), logger: db.logger).count == 3)
            try await db.client.query(
                "UPDATE event_queue SET state = 'done', lease_owner = NULL, lease_expires_at = NULL, finished_at = now()", logger: db.logger
            ).readToEnd()
            #expect(try await OperatorStore(client: db.client).requeue(.idRange(1...Int64.max), by: "test", reason: "replay", logger: db.logger) == 3)
            try await db.client.inTransaction(logger: db.logger) { connection in
                try await ShadowSchema.lockLiveTables(on: connection, logger: db.logger)
                #expect(try await queue.claim(limit: 10, owner: "test", lease: .seconds(60), logger: db.logger).isEmpty)
            }
            #expect(try await queue.claim(limit: 10, owner: "test", lease: .seconds(60), logger: db.logger).count == 3)
        }
    }

    /// The swap's entitlement changes reach webhook subscribers like a worker's: a row it repairs, and an event it
    /// applied before any worker did (the worker then finds its facts recorded and projects nothing).
    @Test func theSwapAnnouncesTheEntitlementChangesItMakes() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _) = try await Self.healthyLedger(db)
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/storeledger", logger: db.logger)
            let damaged = try await db.client.query(
                """
                UPDATE subscriptions SET status = 'revoked', entitled = false
                WHERE original_transaction_id = (SELECT min(original_transaction_id) FROM subscriptions WHERE entitled)
                RETURNING original_transaction_id
                """, logger: db.logger
            ).decode(String.self).readToEnd()
            #expect(damaged.count == 1)
            let late = try pipeline.signer.signedTransaction(
                pipeline.signer.transactionPayload(
                    transactionID: "990001", originalTransactionID: "990001", purchaseDate: Date().addingTimeInterval(-86_400),
                    expiresDate: Date().addingTimeInterval(29 * 86_400), signedDate: Date()))
            let report = try await rebuilder(pipeline).run(
                dryRun: false, logger: db.logger,
                beforeSwap: { try await pipeline.append(source: .client, body: #"{"signedTransaction":"\#(late)"}"#) })
            #expect(report.swapped)
            try await pipeline.drain()
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM webhook_events WHERE original_transaction_id = \(damaged[0]) AND type LIKE 'subscription.%'")
                    == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE original_transaction_id = '990001' AND entitled") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events") == 2)
        }
    }

    /// A row that entitled and that the swap removes (no verified fact makes it) is announced as `<kind>.removed`, not
    /// entitled: a host granting access from webhooks learns that it ends. Before, nothing was sent.
    @Test func theSwapAnnouncesARowItRemoves() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _) = try await Self.healthyLedger(db)
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/storeledger", logger: db.logger)
            try await db.client.query(
                "INSERT INTO subscriptions (environment, original_transaction_id, status, entitled) VALUES ('Sandbox', 'bogus', 'active', true)",
                logger: db.logger)
            #expect(try await rebuilder(pipeline).run(dryRun: false, logger: db.logger).swapped)
            let events = try await db.client.query(
                "SELECT type, entitled FROM webhook_events WHERE original_transaction_id = 'bogus'", logger: db.logger
            ).decode((String, Bool).self).readToEnd()
            #expect(events.map(\.0) == ["subscription.removed"])
            #expect(events.map(\.1) == [false])
        }
    }

    /// A purchase the swap brings in (an event the rebuild applied before any worker did) is announced as a worker
    /// would announce it: at its facts' instant (not 1970), and a family member's revocation as `purchase.revoked`.
    /// Before, a purchase's change columns lacked when it was signed, its ownership and its expiry, so the swap's event
    /// said 1970-01-01 and `refunded`.
    @Test func theSwapAnnouncesAPurchaseItRepairsAsAWorkerWould() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/storeledger", logger: db.logger)
            let revokedAt = Date(timeIntervalSince1970: 1_780_000_000)
            let shared = try pipeline.signer.signedTransaction(
                pipeline.signer.transactionPayload(
                    transactionID: "995001", originalTransactionID: "995001", productID: "com.example.unlock",
                    purchaseDate: revokedAt.addingTimeInterval(-86_400), signedDate: revokedAt, type: "Non-Consumable",
                    overrides: ["inAppOwnershipType": "FAMILY_SHARED", "revocationDate": TestSigner.milliseconds(revokedAt), "revocationReason": 0]))
            try await pipeline.append(source: .client, body: #"{"signedTransaction":"\#(shared)"}"#)
            #expect(try await rebuilder(pipeline).run(dryRun: false, logger: db.logger).swapped)
            try await pipeline.drain()
            let events = try await db.client.query(
                "SELECT type, occurred_at FROM webhook_events WHERE transaction_id = '995001'", logger: db.logger
            ).decode((String, Date).self).readToEnd()
            #expect(events.map(\.0) == ["purchase.revoked"])
            #expect(events.map { $0.1.timeIntervalSince1970 } == [revokedAt.timeIntervalSince1970])
        }
    }

    /// A repair announces the same facts as the wrong event it corrects, so the same `occurred_at`: `sequence` (the
    /// order of enqueueing, in the payload) puts it after every earlier event of its purchase, so a receiver that applies
    /// a purchase's events in that order ends with the repair.
    @Test func aRepairIsSequencedAfterTheEventsItCorrects() async throws {
        try await TestDatabase.withFresh { db in
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/storeledger", logger: db.logger)
            let (pipeline, _) = try await Self.healthyLedger(db)
            let damaged = try #require(
                try await db.client.query(
                    """
                    UPDATE subscriptions SET status = 'revoked', entitled = false
                    WHERE original_transaction_id = (SELECT min(original_transaction_id) FROM subscriptions WHERE entitled)
                    RETURNING original_transaction_id
                    """, logger: db.logger
                ).decode(String.self).readToEnd().first)
            let before = try await db.scalar("SELECT count(*) FROM webhook_events WHERE original_transaction_id = \(damaged)")
            #expect(before > 0)
            #expect(try await rebuilder(pipeline).run(dryRun: false, logger: db.logger).swapped)
            let events = try await db.client.query(
                """
                SELECT sequence, (payload->>'sequence')::int8, occurred_at FROM webhook_events
                WHERE original_transaction_id = \(damaged) ORDER BY sequence
                """, logger: db.logger
            ).decode((Int64, Int64, Date).self).readToEnd()
            #expect(events.count == before + 1)
            #expect(events.allSatisfy { $0.0 == $0.1 }, "the payload carries the column's sequence")
            #expect(Set(events.map(\.0)).count == events.count)
            let repair = try #require(events.last)
            #expect(repair.2 == events.dropLast().map(\.2).max(), "the repair carries the facts' instant: occurred_at cannot order it")
        }
    }

    /// A month detached for archiving leaves its events' queue rows and facts: a rebuild, which replays only the log
    /// it has, would drop those facts, so it refuses unless told (a dry run goes on); requeueing such an event, whose
    /// body is gone, selects nothing.
    @Test func monthsDetachedForArchivingStopARebuildAndAreNeverRequeued() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)
            // One processed notification (a redelivery of the first) received in January 2025, then that month detached.
            try await EventPartitions(client: db.client).ensure(monthsAhead: 0, from: Self.date("2025-01-10T00:00:00Z"), logger: db.logger)
            let old = try pipeline.signer.signedEvent(for: Self.workload()[0])
            let archivedID = try await db.client.query(
                """
                WITH e AS (
                    INSERT INTO events (received_at, source, body, body_sha256)
                    VALUES ('2025-01-10T00:00:00Z', \(old.source.rawValue), \(ByteBuffer(string: old.body)), sha256(\(ByteBuffer(string: old.body))))
                    RETURNING id, received_at
                ) INSERT INTO event_queue (event_id, event_received_at, state, finished_at) SELECT id, received_at, 'done', now() FROM e
                RETURNING event_id
                """, logger: db.logger
            ).decode(Int64.self).readToEnd()
            #expect(
                try await EventPartitions(client: db.client).detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger)
                    .detached == ["events_2025_01"])

            let refused = await #expect(throws: RebuildError.self) { _ = try await rebuilder(pipeline).run(dryRun: false, logger: db.logger) }
            #expect(refused?.code == .archivedEvents)
            #expect(refused?.detail.contains("1 event(s)") == true)
            #expect(try await Self.derived(db) == healthy)
            #expect(try await rebuilder(pipeline).run(dryRun: true, logger: db.logger).differences.isEmpty)
            let accepted = Rebuilder(client: db.client, handler: pipeline.handler, batchSize: 13, catchUpThreshold: 5, acceptArchivedEvents: true)
            #expect(try await accepted.run(dryRun: false, logger: db.logger).swapped)

            let requeued = try await OperatorStore(client: db.client).requeue(.ids(archivedID), by: "test", reason: "archived", logger: db.logger)
            #expect(requeued == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state <> 'done'") == 0)
        }
    }

    /// A detached month whose queue rows were pruned too: nothing in the queue says its events are gone, but the
    /// ledger's facts name them, and the swap refuses to drop those without `--accept-archived-events`.
    @Test func aDetachedMonthWhoseQueueRowsWerePrunedStillStopsTheSwap() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)
            try await EventPartitions(client: db.client).ensure(monthsAhead: 0, from: Self.date("2025-01-10T00:00:00Z"), logger: db.logger)
            // A subscription of its own, bought in a notification received in January 2025 that no other event delivers:
            // processed, then its month detached and its queue row pruned.
            var builder = SubscriptionLifecycleBuilder(originalTransactionID: "9900", includesStatus: true)
            builder.subscribe()
            let old = try pipeline.signer.signedEvent(for: try #require(builder.facts.first))
            try await db.client.query(
                """
                WITH e AS (
                    INSERT INTO events (received_at, source, body, body_sha256)
                    VALUES ('2025-01-10T00:00:00Z', \(old.source.rawValue), \(ByteBuffer(string: old.body)), sha256(\(ByteBuffer(string: old.body))))
                    RETURNING id, received_at
                ) INSERT INTO event_queue (event_id, event_received_at) SELECT id, received_at FROM e
                """, logger: db.logger
            ).readToEnd()
            try await pipeline.drain()
            let withOld = try await Self.derived(db)
            #expect(withOld != healthy, "the January notification should have been recorded")
            #expect(
                try await EventPartitions(client: db.client).detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger)
                    .detached == ["events_2025_01"])
            try await db.client.query("DELETE FROM event_queue WHERE event_received_at < '2025-02-01'", logger: db.logger).readToEnd()
            #expect(try await db.client.withConnection { try await EventPage.countArchived(on: $0, logger: db.logger) } == 0)

            let refused = await #expect(throws: RebuildError.self) { _ = try await rebuilder(pipeline).run(dryRun: false, logger: db.logger) }
            #expect(refused?.code == .archivedEvents)
            #expect(try await Self.derived(db) == withOld)
            let accepted = Rebuilder(client: db.client, handler: pipeline.handler, batchSize: 13, catchUpThreshold: 5, acceptArchivedEvents: true)
            #expect(try await accepted.run(dryRun: false, logger: db.logger).swapped)
            #expect(try await Self.derived(db) == healthy)
        }
    }

    /// A session still reading the shadow when the swap has committed (an operator's `psql` looking at it) keeps the
    /// rebuild from dropping it: the rebuild reports its committed swap all the same, leaving the shadow for later,
    /// instead of failing (or waiting on) a rebuild that is done.
    @Test func aShadowThatCannotBeDroppedAfterTheSwapLeavesTheRebuildReported() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, healthy) = try await Self.healthyLedger(db)
            let locked = AnsweredFlag()
            let done = AnsweredFlag()
            let reader = Mutex<Task<Void, any Error>?>(nil)
            let rebuilder = Rebuilder(
                client: db.client, handler: pipeline.handler, batchSize: 13, catchUpThreshold: 5, swapLockWait: .seconds(2))
            let report = try await rebuilder.run(
                dryRun: false, logger: db.logger,
                duringSwap: {
                    guard reader.withLock({ $0 }) == nil else { return }
                    reader.withLock {
                        $0 = Task {
                            try await db.withTableLocked("\(ShadowSchema.name).subscriptions", mode: "ACCESS SHARE") {
                                locked.set()
                                while !done.isSet { try await Task.sleep(for: .milliseconds(10)) }
                            }
                        }
                    }
                    while !locked.isSet { try await Task.sleep(for: .milliseconds(10)) }
                })
            let shadowLeft = try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)")
            done.set()
            try await reader.withLock { $0 }?.value
            #expect(report.swapped)
            #expect(shadowLeft == 1, "the shadow was dropped: the drop waited for the reader")
            #expect(try await Self.derived(db) == healthy)
            #expect(try await rebuilder.run(dryRun: true, logger: db.logger).differences.isEmpty)
            #expect(try await db.scalar("SELECT count(*) FROM pg_namespace WHERE nspname = \(ShadowSchema.name)") == 0)
        }
    }

    /// An instant written in RFC 3339.
    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    @Test func gapsAreTheIdsAReadInIdOrderPassedOver() {
        #expect(Rebuilder.gaps(after: 0, in: [1, 2, 3]).isEmpty)
        #expect(Rebuilder.gaps(after: 0, in: [2, 3, 7]) == [1...1, 4...6])
        #expect(Rebuilder.gaps(after: 10, in: [12]) == [11...11])
        #expect(Rebuilder.gaps(after: 10, in: []).isEmpty)
    }
}
