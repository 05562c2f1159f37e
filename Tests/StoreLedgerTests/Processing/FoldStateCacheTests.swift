import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The decoded fold states a process keeps (`FoldStateCache`, under the digest of each state's stored text) against
/// real Postgres: a state held is not read and decoded again while the stored digest is the one held, and is never
/// used once the stored state is another (another process wrote it, a transaction that wrote it rolled back, the
/// digest is missing).
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

    @Test func aHeldStateIsNotReadAgainWhileTheStoredDigestIsTheOneHeld() async throws {
        try await TestDatabase.withFresh { db in
            let (key, states) = try Self.states()
            let cache = FoldStateCache(capacity: 10)
            try await write(states[2], cache: cache, in: db)
            #expect(try await db.scalar("SELECT count(*) FROM subscription_fold_states WHERE length(state_sha256) = 32") == 1)
            #expect(try await read(key, cache: cache, in: db) == states[2])
            // The stored text is replaced behind the digest: a process holding the state does not read the text ...
            try await db.client.query(#"UPDATE subscription_fold_states SET state = '{"replaced": true}'"#, logger: db.logger)
            #expect(try await read(key, cache: cache, in: db) == states[2])
            // ... one that does not hold it reads (and here cannot decode) the text ...
            #expect(try await read(key, cache: FoldStateCache(capacity: 10), in: db) == nil)
            // ... and once the digest is not the one held, neither does the first.
            try await db.client.query("UPDATE subscription_fold_states SET state_sha256 = NULL", logger: db.logger)
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
