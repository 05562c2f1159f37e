import StoreLedgerCore
import StoreLedgerTestSupport
import Testing

/// The purchase fold: one row per (environment, transaction id) for consumables, non-consumables and
/// non-renewing subscriptions.
@Suite("Core: purchase projection")
struct CorePurchaseProjectionTests {
    let lifecycle = PurchaseLifecycles.all()

    /// Folds the shared purchase facts for one purchase.
    func state(_ id: TransactionID) throws -> PurchaseState {
        try #require(PurchaseProjection.fold(lifecycle.facts, key: PurchaseKey(environment: .sandbox, transactionID: id)))
    }

    @Test func refundedConsumable() throws {
        let state = try state(lifecycle.ids.refundedConsumable)
        #expect(state.productID == "com.example.coins")
        #expect(state.productType == .consumable)
        #expect(state.quantity == 3)
        #expect(state.price == 2_970)
        #expect(state.currency == "EUR")
        #expect(state.appAccountToken == "a1b2")
        #expect(!state.entitled)
        #expect(state.revokedAt != nil)
        #expect(state.revocationReason == .appIssue)
        #expect(state.revocationType == .refundFull)
    }

    @Test func refundReversedNonConsumable() throws {
        let state = try state(lifecycle.ids.reversedNonConsumable)
        #expect(state.productType == .nonConsumable)
        #expect(state.entitled)
        #expect(state.revokedAt == nil)
        #expect(state.revocationReason == nil)
        #expect(state.lastSignedAt == lifecycle.facts.last?.signedDate)
    }

    @Test func refundedNonConsumableBeforeReversal() throws {
        let facts = lifecycle.facts.dropLast()  // without REFUND_REVERSED
        let state = try #require(PurchaseProjection.fold(facts, key: PurchaseKey(environment: .sandbox, transactionID: lifecycle.ids.reversedNonConsumable)))
        #expect(!state.entitled)
        #expect(state.revocationType == .refundFull)
    }

    @Test func familyRevoked() throws {
        let state = try state(lifecycle.ids.familyRevoked)
        #expect(state.ownership == .familyShared)
        #expect(!state.entitled)
        #expect(state.revocationType == .familyRevoke)
    }

    @Test func nonRenewingEndsAtExpiry() throws {
        let state = try state(lifecycle.ids.nonRenewing)
        #expect(state.productType == .nonRenewing)
        #expect(state.entitled)
        let expires = try #require(state.expiresAt)
        #expect(state.isEntitled(at: expires.adding(milliseconds: -1)))
        #expect(!state.isEntitled(at: expires))
    }

    @Test func consumptionRequestAndDeclinedRefundChangeNothing() throws {
        let state = try state(lifecycle.ids.declinedConsumable)
        #expect(state.entitled)
        #expect(state.revokedAt == nil)
    }

    @Test func subscriptionsAreNotPurchases() {
        #expect(PurchaseProjection.foldAll(SubscriptionLifecycles.renewThenExpire().facts).isEmpty)
        #expect(PurchaseProjection.foldAll(lifecycle.facts).count == 5)
    }
}
