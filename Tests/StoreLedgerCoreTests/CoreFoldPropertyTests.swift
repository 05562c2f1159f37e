import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The read model is a pure function of the set of facts: any permutation, any duplication and a rebuild
/// give the same row (≥ 200 seeded random permutations per lifecycle; the seed is reported on failure).
@Suite("Core: fold is order- and duplicate-independent")
struct CoreFoldPropertyTests {
    /// Every subscription lifecycle folds identically under ≥ 200 permutations with duplicates.
    @Test(arguments: [true, false])
    func subscriptionLifecycles(includesStatus: Bool) {
        for (_, salt, builder) in SubscriptionLifecycles.all(includesStatus: includesStatus) {
            FactPermutations.expectOrderIndependent(builder.facts, salt: salt &* 2 &+ (includesStatus ? 1 : 0)) {
                SubscriptionProjection.fold($0)
            }
        }
    }

    /// Facts with equal signed dates still fold deterministically.
    @Test func factsSignedAtTheSameInstant() {
        // Ties on signed date are broken by kind, stable id and content: still order-independent.
        let b = SubscriptionLifecycles.signedAtOneInstant()
        FactPermutations.expectOrderIndependent(b.facts, salt: 77) { SubscriptionProjection.fold($0) }
        #expect(SubscriptionProjection.fold(b.facts)?.status == .revoked)
    }

    /// Two renewal infos of one subscription signed at the same instant tie on date, kind and id: the canonical
    /// content decides, whatever the order, and the greater canonical JSON wins.
    @Test func exactTiesAreBrokenByCanonicalContent() throws {
        func renewalInfo(autoRenew: AutoRenewStatus) -> RenewalInfoPayload {
            var renewal = RenewalInfoPayload()
            renewal.originalTransactionID = "4200"
            renewal.environment = .sandbox
            renewal.productID = "com.example.monthly"
            renewal.autoRenewStatus = autoRenew
            renewal.signedDate = 1_700_000_000_000
            return renewal
        }
        let on = renewalInfo(autoRenew: .on)
        let off = renewalInfo(autoRenew: .off)
        let facts: [LedgerFact] = [.renewalInfo(on), .renewalInfo(off)]
        FactPermutations.expectOrderIndependent(facts, salt: 4200) { SubscriptionProjection.fold($0) }
        // The key orders the facts by their canonical JSON, and the fold takes the later one.
        let sorted = facts.sorted { $0.sortKey < $1.sortKey }
        #expect(sorted.map(\.sortKey.canonicalContent) == facts.map(\.sortKey.canonicalContent).sorted())
        let expectedWinner = try #require({ if case .renewalInfo(let r) = sorted.last! { r } else { nil } }())
        #expect(SubscriptionProjection.fold(facts)?.autoRenew == (expectedWinner.autoRenewStatus == .on))
        #expect(SubscriptionProjection.fold(facts.reversed())?.autoRenew == (expectedWinner.autoRenewStatus == .on))
    }

    /// Every intermediate state is order-independent as well.
    @Test func everyPrefixOfEveryLifecycle() {
        // Intermediate states are order-independent too (fewer iterations: many prefixes).
        for (_, salt, builder) in SubscriptionLifecycles.all(includesStatus: true) {
            for length in 1...builder.facts.count {
                FactPermutations.expectOrderIndependent(
                    Array(builder.facts.prefix(length)), iterations: 20, salt: salt &* 1_000 &+ UInt64(length)
                ) { SubscriptionProjection.fold($0) }
            }
        }
    }

    /// Mixed facts of many rows fold identically with foldAll.
    @Test func manySubscriptionsAndPurchasesTogether() {
        let facts =
            SubscriptionLifecycles.all(includesStatus: true).flatMap(\.builder.facts)
            + PurchaseLifecycles.all().facts
        FactPermutations.expectOrderIndependent(facts, iterations: 50, salt: 99) { SubscriptionProjection.foldAll($0) }
        FactPermutations.expectOrderIndependent(facts, iterations: 50, salt: 98) { PurchaseProjection.foldAll($0) }
    }

    /// Every one-time purchase folds identically under permutation and duplication.
    @Test func purchases() {
        let facts = PurchaseLifecycles.all().facts
        let keys = Set(facts.compactMap(\.purchaseKey))
        #expect(keys.count == 5)
        for (index, key) in keys.sorted().enumerated() {
            FactPermutations.expectOrderIndependent(facts, salt: 500 &+ UInt64(index)) {
                PurchaseProjection.fold($0, key: key)
            }
        }
    }

    /// A notification seen again without its nested payloads changes nothing.
    @Test func duplicateNotificationWithoutNestedPayloadsIsIgnored() throws {
        // The same notification UUID seen once with its nested payloads and once without (for example before
        // its nested JWS were verified): the richer one is kept, in any order.
        let b = SubscriptionLifecycles.renewThenExpire()
        guard case .notification(let last) = b.facts.last! else {
            Issue.record("no notification")
            return
        }
        let bare = LedgerFact.notification(NotificationFact(payload: last.payload))
        let expected = SubscriptionProjection.fold(b.facts)
        #expect(SubscriptionProjection.fold(b.facts + [bare]) == expected)
        #expect(SubscriptionProjection.fold([bare] + b.facts) == expected)
    }

    /// The property check itself catches an order-dependent fold.
    @Test func harnessCatchesOrderDependence() {
        // The property check itself must notice a fold that depends on input order.
        let facts = SubscriptionLifecycles.renewThenExpire().facts
        withKnownIssue {
            FactPermutations.expectOrderIndependent(facts, iterations: 20, salt: 7) { $0.first?.signedDate }
        }
    }
}
