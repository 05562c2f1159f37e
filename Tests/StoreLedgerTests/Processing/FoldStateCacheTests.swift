import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The decoded fold states a process keeps (`FoldStateCache`, under the version stored beside each state) against
/// real Postgres: a state held is not read and decoded again while the stored version is the one held, and is never
/// used once the stored state is another (another process wrote it, a transaction that wrote it rolled back, a
/// rebuild replaced it, the version is missing).
@Suite("Processing: fold states held decoded")
struct FoldStateCacheTests {
    static let pki = try! TestPKI()

    /// A renewal history's facts, its key, and the fold states after its first `count` facts, for each count.
    static func states() throws -> (key: SubscriptionKey, states: [SubscriptionFoldState]) {
        let facts = SimulatedLifecycle.renewals.facts(
            LifecycleSetup(originalTransactionID: "770001", start: 1_735_689_600_000, bundleID: "com.example.app", appAppleID: 1_234)
        )
        let key = try #require(facts.compactMap(\.subscriptionKey).first)
        let states = try (1...facts.count).map { try #require(SubscriptionProjection.foldWithState(Array(facts.prefix($0)), key: key).state) }
        return (key, states)
    }

    func write(_ state: SubscriptionFoldState, cache: FoldStateCache, in db: TestDatabase) async throws {
        try await db.client.inTransaction(logger: db.logger) { connection in
            try await FoldStateStore.write([state.key: state], cache: cache, on: connection, logger: db.logger)
        }
    }

    func read(_ key: SubscriptionKey, cache: FoldStateCache, in db: TestDatabase) async throws -> SubscriptionFoldState? {
        try await db.client.inTransaction(logger: db.logger) { connection in
            try await FoldStateStore.subscriptionStates([key], cache: cache, on: connection, logger: db.logger)[key]?.state
        }
    }

    @Test func aHeldStateIsNotReadAgainWhileTheStoredVersionIsTheOneHeld() async throws {
        try await TestDatabase.withFresh { db in
            let (key, states) = try Self.states()
            let cache = FoldStateCache(capacity: 10)
            try await write(states[2], cache: cache, in: db)
            #expect(try await db.scalar("SELECT count(*) FROM subscription_fold_states WHERE state_version IS NOT NULL") == 1)
            #expect(try await read(key, cache: cache, in: db) == states[2])
            // The stored text is replaced behind the version: a process holding the state does not read the text ...
            try await db.client.query(#"UPDATE subscription_fold_states SET state = '{"replaced": true}'"#, logger: db.logger)
            #expect(try await read(key, cache: cache, in: db) == states[2])
            // ... one that does not hold it reads (and here cannot decode) the text ...
            #expect(try await read(key, cache: FoldStateCache(capacity: 10), in: db) == nil)
            // ... and once the version is not the one held, neither does the first.
            try await db.client.query("UPDATE subscription_fold_states SET state_version = NULL", logger: db.logger)
            #expect(try await read(key, cache: cache, in: db) == nil)
        }
    }

    @Test func aStateAnotherProcessWroteIsReadFromTheDatabase() async throws {
        try await TestDatabase.withFresh { db in
            let (key, states) = try Self.states()
            let first = FoldStateCache(capacity: 10)
            let second = FoldStateCache(capacity: 10)
            try await write(states[1], cache: first, in: db)
            #expect(try await read(key, cache: second, in: db) == states[1])
            try await write(states[3], cache: second, in: db)
            #expect(try await read(key, cache: first, in: db) == states[3])
            #expect(first.count == 1)
        }
    }

    @Test func aStateWhoseWriteRolledBackIsNotUsed() async throws {
        try await TestDatabase.withFresh { db in
            let (key, states) = try Self.states()
            let cache = FoldStateCache(capacity: 10)
            try await write(states[1], cache: cache, in: db)
            struct RolledBack: Error {}
            await #expect(throws: RolledBack.self) {
                try await db.client.inTransaction(logger: db.logger) { connection in
                    try await FoldStateStore.write([key: states[4]], cache: cache, on: connection, logger: db.logger)
                    throw RolledBack()
                }
            }
            #expect(try await read(key, cache: cache, in: db) == states[1])
        }
    }

    @Test func versionsAreNeverRepeatedNorTheOneSentForNoState() {
        let versions = (0..<10_000).map { _ in FoldStateCache.newVersion() }
        #expect(Set(versions).count == versions.count)
        #expect(!versions.contains(FoldStateCache.noVersion))
        // One process's versions share its random half and count its writes in the other: increasing, though not
        // always by one (tests running beside this one write fold states of their own in the same process).
        let bytes = versions.map { withUnsafeBytes(of: $0.uuid) { Array($0) } }
        #expect(Set(bytes.map { Array($0[0..<8]) }).count == 1)
        let counts = bytes.map { $0[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        #expect(zip(counts, counts.dropFirst()).allSatisfy { $0 < $1 })
    }

    /// The version stored for `key`.
    func storedVersion(_ key: SubscriptionKey, in db: TestDatabase) async throws -> UUID? {
        try await db.client.query(
            """
            SELECT state_version FROM subscription_fold_states
            WHERE environment = \(key.environment.rawValue) AND original_transaction_id = \(key.originalTransactionID.rawValue)
            """, logger: db.logger
        ).decode(UUID?.self).firstAfterReadingAll() ?? nil
    }

    @Test func aRebuildKeepsTheVersionOfAStateItRebuiltAsItWasAndReplacesTheVersionOfOneItChanged() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let facts = SimulatedLifecycle.renewals.facts(
                LifecycleSetup(
                    originalTransactionID: "770003", start: 1_735_689_600_000, bundleID: "com.example.app", appAppleID: 1_234, renewals: 3
                )
            )
            try await pipeline.append(facts)
            try await pipeline.drain()
            let key = try #require(facts.compactMap(\.subscriptionKey).first)
            let rebuilder = Rebuilder(client: db.client, handler: pipeline.handler, batchSize: 5, catchUpThreshold: 5)
            // (The worker's batches were not the rebuild's: its state may summarise the facts otherwise.)
            _ = try await rebuilder.run(dryRun: false, logger: db.logger)
            let live = try #require(try await storedVersion(key, in: db))
            // Rebuilt as it was: the live version stays, so processes holding the state keep using it.
            _ = try await rebuilder.run(dryRun: false, logger: db.logger)
            #expect(try await storedVersion(key, in: db) == live)
            // A stored state the facts do not give (as a faulty build would have written it, under the version a
            // process holds with the right state): the rebuild replaces the state and, with it, the version, so no
            // process takes the state it holds for the one stored.
            try await db.client.query(#"UPDATE subscription_fold_states SET state = state || '{"hasNotifications": false}'"#, logger: db.logger)
            _ = try await rebuilder.run(dryRun: false, logger: db.logger)
            let replaced = try #require(try await storedVersion(key, in: db))
            #expect(replaced != live)
            #expect(try await read(key, cache: FoldStateCache(capacity: 10), in: db) == SubscriptionProjection.foldWithState(facts, key: key).state)
        }
    }

    @Test func twoProcessesProjectingOneSubscriptionInTurnGiveTheFullFold() async throws {
        try await TestDatabase.withFresh { db in
            // Two pipelines: two handlers, each with the cache of its own process.
            let first = try LedgerPipeline(db, pki: Self.pki)
            let second = try LedgerPipeline(db, pki: Self.pki)
            let facts = SimulatedLifecycle.renewals.facts(
                LifecycleSetup(
                    originalTransactionID: "770002", start: 1_735_689_600_000, bundleID: "com.example.app", appAppleID: 1_234, renewals: 8
                )
            )
            // The first process folds the history but its last two facts; the second records the newest (expiry);
            // then the first gets the one before it, late: it must merge into the state the second stored, not the one
            // it holds.
            try await first.append(Array(facts.dropLast(2)))
            try await first.drain()
            try await second.append([facts[facts.count - 1]])
            try await second.drain()
            try await first.append([facts[facts.count - 2]])
            try await first.drain()
            let key = try #require(facts.compactMap(\.subscriptionKey).first)
            let expected = try #require(SubscriptionProjection.fold(facts, key: key))
            let row = try #require(try await first.subscription("770002"))
            #expect(expected.status == .expired)
            #expect(row["status"] as? String == expected.status.rawValue)
            #expect(row["latest_transaction_id"] as? String == expected.latestTransactionID?.rawValue)
            var handler = first.handler
            handler.foldsIncrementally = false
            let full = try await Rebuilder(client: db.client, handler: handler, batchSize: 5, catchUpThreshold: 5)
                .run(dryRun: true, logger: db.logger)
            #expect(full.differences.isEmpty, "\(full.differences.map { "\($0.key) \($0.live ?? "") -> \($0.rebuilt ?? "")" })")
        }
    }
}
