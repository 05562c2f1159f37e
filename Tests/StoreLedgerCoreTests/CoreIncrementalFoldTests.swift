import Foundation
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The incremental fold (`SubscriptionFoldState`, merged one fact at a time as the worker does, refolding from all
/// facts only when a merge refuses) gives exactly the full fold of the facts seen so far, after every delivery, for
/// random permutations with duplicates of every lifecycle; and in signing order it never needs to refold.
@Suite("Core: incremental fold equals the full fold")
struct CoreIncrementalFoldTests {
    /// What delivering facts one by one did.
    struct Delivery {
        /// The row after the last delivery.
        var row: SubscriptionState?
        /// How many deliveries needed a refold from all facts.
        var refolds = 0
    }

    /// The state as the database keeps it: its `storedJSON`, which must decode to an equal state, through
    /// `JSONDecoder` and through the plain reader the store uses (which must not need `JSONDecoder` for it).
    static func stored(_ state: SubscriptionFoldState, sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
        let json = Data(try #require(state.storedJSON, sourceLocation: sourceLocation).utf8)
        let decoded = try JSONDecoder().decode(SubscriptionFoldState.self, from: json)
        #expect(decoded == state, "storedJSON does not decode to the state it was written from", sourceLocation: sourceLocation)
        #expect(
            SubscriptionFoldState.plain(storedJSON: json) == state, "the plain reader does not read storedJSON back to the state",
            sourceLocation: sourceLocation)
        return json
    }

    /// Delivers `facts` one at a time: merge into the state (kept as JSON, as the database keeps it), or refold all
    /// facts seen so far when the merge refuses. After each delivery (every `checkEvery`-th, and the last) the row must
    /// equal the full fold of the facts seen so far.
    static func deliver(
        _ facts: [LedgerFact], key: SubscriptionKey, label: String, checkEvery: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Delivery {
        var seen: [LedgerFact] = []
        var stored: Data? = try Self.stored(SubscriptionFoldState(key: key), sourceLocation: sourceLocation)
        var delivery = Delivery()
        for (index, fact) in facts.enumerated() {
            seen.append(fact)
            let state = try stored.map { try SubscriptionFoldState.decode(storedJSON: $0) }
            if let state, let merged = SubscriptionProjection.merge([fact], into: state) {
                delivery.row = merged.row
                stored = try Self.stored(merged.state, sourceLocation: sourceLocation)
            } else {
                let refolded = SubscriptionProjection.foldWithState(seen, key: key)
                delivery.row = refolded.row
                stored = try refolded.state.map { try Self.stored($0, sourceLocation: sourceLocation) }
                delivery.refolds += 1
            }
            guard index % checkEvery == 0 || index == facts.count - 1 else { continue }
            let expected = SubscriptionProjection.fold(seen, key: key)
            guard delivery.row == expected else {
                Issue.record(
                    """
                    \(label): incremental row differs from the full fold after delivery \(index) \
                    (CORE_PROPERTY_SEED=\(FactPermutations.baseSeed))
                    expected: \(String(describing: expected))
                    actual:   \(String(describing: delivery.row))
                    """,
                    sourceLocation: sourceLocation
                )
                return delivery
            }
        }
        return delivery
    }

    /// The setup simulated lifecycles are played with.
    static func setup(renewals: Int = 3) -> LifecycleSetup {
        LifecycleSetup(
            originalTransactionID: "2000000000007000", start: 1_735_689_600_000, bundleID: "com.example.storeledger",
            appAppleID: 1_234_567_890, renewals: renewals
        )
    }

    /// Every lifecycle the simulator plays (`storeledger simulate --lifecycle`), 200 random permutations with duplicates.
    @Test(arguments: SimulatedLifecycle.allCases.filter { $0 != .oneTimePurchase })
    func everySimulatedLifecycle(_ lifecycle: SimulatedLifecycle) async throws {
        let facts = lifecycle.facts(Self.setup())
        let key = try #require(facts.compactMap(\.subscriptionKey).first)
        let salt = UInt64(SimulatedLifecycle.allCases.firstIndex(of: lifecycle) ?? 0) &+ 9_000
        var rng = SplitMix64(seed: FactPermutations.baseSeed ^ salt)
        for iteration in 0..<200 {
            let permuted = FactPermutations.shuffledWithDuplicates(facts, using: &rng)
            _ = try Self.deliver(permuted, key: key, label: "\(lifecycle.rawValue) permutation \(iteration)")
            await Task.yield()  // CPU-bound: leave the cooperative pool to the suite's other tests now and then
        }
    }

    /// The test suite's own lifecycles, with and without Apple's `data.status`, 200 permutations with duplicates each.
    @Test(arguments: [true, false])
    func everyProjectionLifecycle(includesStatus: Bool) async throws {
        for (name, salt, builder) in SubscriptionLifecycles.all(includesStatus: includesStatus) {
            let key = try #require(builder.facts.compactMap(\.subscriptionKey).first)
            var rng = SplitMix64(seed: FactPermutations.baseSeed ^ (salt &* 31 &+ (includesStatus ? 1 : 0)))
            for iteration in 0..<200 {
                let permuted = FactPermutations.shuffledWithDuplicates(builder.facts, using: &rng)
                _ = try Self.deliver(permuted, key: key, label: "\(name) permutation \(iteration)")
                await Task.yield()
            }
        }
    }

    /// Facts signed at the same instant (exact ties broken by content in the full fold) still give the full fold.
    @Test func factsSignedAtTheSameInstant() async throws {
        let b = SubscriptionLifecycles.signedAtOneInstant()
        let key = try #require(b.facts.compactMap(\.subscriptionKey).first)
        var rng = SplitMix64(seed: FactPermutations.baseSeed ^ 78)
        for iteration in 0..<200 {
            _ = try Self.deliver(FactPermutations.shuffledWithDuplicates(b.facts, using: &rng), key: key, label: "tie \(iteration)")
            await Task.yield()
        }
    }

    /// In signing order, and delivered again (Apple's retries), every lifecycle but the upgrade merges without a
    /// refold; 156 renewals included. The upgrade refolds twice: the old transaction re-signed as upgraded unseats the
    /// current one (the state does not keep the runner-up it would fall back to), and every transaction is then
    /// upgraded, which the state does not summarise, until the new one arrives.
    @Test(arguments: SimulatedLifecycle.allCases.filter { $0 != .oneTimePurchase })
    func inSigningOrderNothingRefolds(_ lifecycle: SimulatedLifecycle) throws {
        let facts = lifecycle.facts(Self.setup(renewals: 156))
        let key = try #require(facts.compactMap(\.subscriptionKey).first)
        // Compared with the full fold after every 16th delivery and the last (each full fold reads the whole history).
        let delivery = try Self.deliver(facts + facts, key: key, label: lifecycle.rawValue, checkEvery: 16)
        if lifecycle == .upgrade {
            #expect(delivery.refolds == 2, "\(lifecycle.rawValue)")
        } else {
            #expect(delivery.refolds == 0, "\(lifecycle.rawValue)")
        }
    }

    /// A late, older renewal and a late refund of an older period merge without a refold and leave the row alone.
    @Test func lateOlderFactsMergeAndChangeNothing() throws {
        var b = SubscriptionLifecycleBuilder()
        b.subscribe()
        b.advanceToExpiry()
        b.renew()
        let olderPeriod = b.facts.last!
        b.advanceToExpiry()
        b.renew()
        let key = try #require(b.facts.compactMap(\.subscriptionKey).first)
        // The refund of the first period, signed after everything else, delivered before the middle renewal.
        guard case .notification(let renewal) = olderPeriod, var refunded = renewal.transaction else {
            Issue.record("no renewal notification")
            return
        }
        refunded.revocationDate = b.now
        refunded.signedDate = b.now
        var payload = renewal.payload
        payload.notificationType = .refund
        payload.subtype = nil
        payload.notificationUUID = "late-refund"
        payload.signedDate = b.now
        payload.data?.status = nil
        let refund = LedgerFact.notification(NotificationFact(payload: payload, transaction: refunded, renewalInfo: renewal.renewalInfo))
        let withoutMiddle = b.facts.filter { $0 != olderPeriod }
        let before = SubscriptionProjection.fold(withoutMiddle, key: key)
        let delivery = try Self.deliver(withoutMiddle + [olderPeriod, refund], key: key, label: "late older facts")
        #expect(delivery.refolds == 0)
        #expect(delivery.row?.latestTransactionID == before?.latestTransactionID)
        #expect(delivery.row?.expiresAt == before?.expiresAt)
        #expect(delivery.row?.status == .active)
        #expect(delivery.row?.revokedAt == nil)
    }

    /// The state the database keeps round-trips through JSON unchanged.
    @Test func stateRoundTripsThroughJSON() throws {
        let b = SubscriptionLifecycles.upgradeRefundReversed()
        let key = try #require(b.facts.compactMap(\.subscriptionKey).first)
        let state = try #require(SubscriptionProjection.foldWithState(b.facts, key: key).state)
        let decoded = try JSONDecoder().decode(SubscriptionFoldState.self, from: JSONEncoder().encode(state))
        #expect(decoded == state)
        // The text the store writes decodes to the same state, and equal states give equal text.
        let stored = try #require(state.storedJSON)
        #expect(try JSONDecoder().decode(SubscriptionFoldState.self, from: Data(stored.utf8)) == state)
        #expect(decoded.storedJSON == stored)
        #expect(decoded.resolve() == .row(SubscriptionProjection.fold(b.facts, key: key)))
    }
}
