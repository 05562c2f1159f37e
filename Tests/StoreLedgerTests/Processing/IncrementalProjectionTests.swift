import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The worker's incremental projection (new facts merged into each subscription's stored fold state) against real
/// Postgres: after delivery in random order with duplicates, the live rows equal a from-scratch rebuild and a rebuild
/// that refolds every row from all of its facts; a re-delivery writes nothing.
@Suite("Processing: incremental projection equals a from-scratch rebuild")
struct IncrementalProjectionTests {
    static let pki = try! TestPKI()

    /// Every simulated lifecycle (long renewal histories included) and the one-time purchases, each subscription under
    /// its own original transaction id.
    static func facts() -> [LedgerFact] {
        var facts: [LedgerFact] = []
        for (index, lifecycle) in SimulatedLifecycle.allCases.enumerated() {
            let setup = LifecycleSetup(
                originalTransactionID: OriginalTransactionID("88000\(index)"), start: 1_735_689_600_000, bundleID: "com.example.app",
                appAppleID: 1_234, renewals: lifecycle == .renewals ? 40 : 3, randomNotificationUUIDs: false
            )
            facts += lifecycle.facts(setup)
        }
        return facts + PurchaseLifecycles.all().facts
    }

    func rebuild(_ pipeline: LedgerPipeline, fullFold: Bool) async throws -> RebuildReport {
        var handler = pipeline.handler
        handler.foldsIncrementally = !fullFold
        return try await Rebuilder(client: pipeline.db.client, handler: handler, batchSize: 11, catchUpThreshold: 5)
            .run(dryRun: true, logger: pipeline.db.logger)
    }

    @Test func liveRowsAfterRandomOrderDeliveryEqualARebuild() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            var rng = SplitMix64(seed: FactPermutations.baseSeed ^ 1515)
            let delivered = FactPermutations.shuffledWithDuplicates(Self.facts(), using: &rng)
            // Delivered in four waves, so rows go through many states and batches mix subscriptions.
            let wave = (delivered.count + 3) / 4
            for start in stride(from: 0, to: delivered.count, by: wave) {
                try await pipeline.append(Array(delivered[start..<min(start + wave, delivered.count)]))
                try await pipeline.drain(batchSize: 5)
            }
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == SimulatedLifecycle.allCases.count - 1)
            #expect(try await db.scalar("SELECT count(*) FROM subscription_fold_states") > 0)

            let incremental = try await rebuild(pipeline, fullFold: false)
            #expect(
                incremental.differences.isEmpty,
                "seed \(FactPermutations.baseSeed): \(incremental.differences.map { "\($0.key) \($0.live ?? "") -> \($0.rebuilt ?? "")" })")
            let full = try await rebuild(pipeline, fullFold: true)
            #expect(
                full.differences.isEmpty,
                "seed \(FactPermutations.baseSeed): \(full.differences.map { "\($0.key) \($0.live ?? "") -> \($0.rebuilt ?? "")" })")
        }
    }

    @Test func aReDeliveryWritesNothing() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = Self.facts()
            try await pipeline.append(facts)
            try await pipeline.drain(batchSize: 13)
            func versions() async throws -> [String] {
                var lines: [String] = []
                let rows = try await db.client.query(
                    """
                    SELECT 's ' || original_transaction_id || ' ' || xmin::text FROM subscriptions
                    UNION ALL SELECT 'f ' || original_transaction_id || ' ' || xmin::text FROM subscription_fold_states
                    UNION ALL SELECT 'p ' || transaction_id || ' ' || xmin::text FROM purchases
                    ORDER BY 1
                    """,
                    logger: db.logger
                )
                for try await line in rows.decode(String.self) { lines.append(line) }
                return lines
            }
            let before = try await versions()
            #expect(!before.isEmpty)
            // Apple retries every notification, and the app posts every transaction again.
            try await pipeline.append(facts)
            try await pipeline.drain(batchSize: 13)
            #expect(try await versions() == before)
            #expect(try await db.scalar("SELECT min(delivery_count) FROM notifications") == 2)
        }
    }

    @Test func aRowWithoutAFoldStateIsRefoldedAndGetsOne() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = SimulatedLifecycle.renewals.facts(
                LifecycleSetup(originalTransactionID: "990001", start: 1_735_689_600_000, bundleID: "com.example.app", appAppleID: 1_234)
            )
            try await pipeline.append(Array(facts.dropLast()))
            try await pipeline.drain()
            // As a row folded before migration 0016: no state.
            try await db.client.query("DELETE FROM subscription_fold_states", logger: db.logger)
            try await pipeline.append(Array(facts.suffix(1)))
            try await pipeline.drain()
            #expect(try await db.scalar("SELECT count(*) FROM subscription_fold_states") == 1)
            let full = try await rebuild(pipeline, fullFold: true)
            #expect(full.differences.isEmpty)
            let row = try #require(try await pipeline.subscription("990001"))
            #expect(row["status"] as? String == "expired")
        }
    }

    /// A state stored under earlier fold rules (before `rulesRevision`: the token fallback by signed date, under
    /// another name) is not merged into: the row is refolded from all its facts and stored under this build's rules.
    /// Merged into, it would have lost the second user's token, and the late refund of the first period would have
    /// handed the row back to the first user.
    @Test func aStateStoredUnderEarlierRulesIsRefolded() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = SubscriptionLifecycles.tokenOfAnEarlierPeriodRefundedLate().facts
            try await pipeline.append(Array(facts.dropLast()))
            try await pipeline.drain()
            try await db.client.query(
                """
                UPDATE subscription_fold_states
                SET state = (state - 'rulesRevision' - 'latestPurchasedAppAccountToken')
                            || jsonb_build_object('transactionAppAccountToken', state -> 'latestPurchasedAppAccountToken'),
                    state_version = NULL
                """, logger: db.logger
            ).readToEnd()
            try await pipeline.append(Array(facts.suffix(1)))
            try await pipeline.drain()
            let row = try #require(try await pipeline.subscription("8000"))
            #expect(row["app_account_token"] as? String == SubscriptionLifecycles.secondUsersToken.rawValue)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM subscription_fold_states WHERE (state ->> 'rulesRevision')::int = \(SubscriptionFoldState.currentRulesRevision)"
                )
                    == 1)
        }
    }

    @Test func aRebuildWritingBatchesSideBySideGivesTheLiveRows() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            // Every fact delivered twice, the copies a few events apart: with batches of 3 written four at a time, the
            // two deliveries of one notification (and its nested transaction) are recorded by concurrent transactions.
            let facts = Self.facts()
            var delivered: [LedgerFact] = []
            for start in stride(from: 0, to: facts.count, by: 4) {
                let part = Array(facts[start..<min(start + 4, facts.count)])
                delivered += part + part.reversed()
            }
            try await pipeline.append(delivered)
            try await pipeline.drain(batchSize: 9)
            for applyConcurrency in [1, 4] {
                let report = try await Rebuilder(
                    client: db.client, handler: pipeline.handler, batchSize: 3, catchUpThreshold: 5, applyConcurrency: applyConcurrency
                ).run(dryRun: true, logger: db.logger)
                #expect(report.eventsReplayed == delivered.count)
                #expect(
                    report.differences.isEmpty,
                    "apply concurrency \(applyConcurrency): \(report.differences.map { "\($0.key) \($0.live ?? "") -> \($0.rebuilt ?? "")" })")
            }
        }
    }
}
