import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The purchase fold: one row per (environment, transaction id) for consumables, non-consumables and
/// non-renewing subscriptions.
@Suite("Core: purchase projection")
struct CorePurchaseProjectionTests {
    /// The shared one-time purchase lifecycle.
    let lifecycle = PurchaseLifecycles.all()

    /// Folds the shared purchase facts for one purchase.
    func state(_ id: TransactionID) throws -> PurchaseState {
        try #require(PurchaseProjection.fold(lifecycle.facts, key: PurchaseKey(environment: .sandbox, transactionID: id)))
    }

    /// A refunded consumable: every column, not entitled.
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

    /// A non-consumable whose refund was reversed is entitled again.
    @Test func refundReversedNonConsumable() throws {
        let state = try state(lifecycle.ids.reversedNonConsumable)
        #expect(state.productType == .nonConsumable)
        #expect(state.entitled)
        #expect(state.revokedAt == nil)
        #expect(state.revocationReason == nil)
        #expect(state.lastSignedAt == lifecycle.facts.last?.signedDate)
    }

    /// Before the reversal, the refunded non-consumable is not entitled.
    @Test func refundedNonConsumableBeforeReversal() throws {
        let facts = lifecycle.facts.dropLast()  // without REFUND_REVERSED
        let state = try #require(
            PurchaseProjection.fold(facts, key: PurchaseKey(environment: .sandbox, transactionID: lifecycle.ids.reversedNonConsumable)))
        #expect(!state.entitled)
        #expect(state.revocationType == .refundFull)
    }

    /// A family-shared purchase whose sharing was revoked.
    @Test func familyRevoked() throws {
        let state = try state(lifecycle.ids.familyRevoked)
        #expect(state.ownership == .familyShared)
        #expect(!state.entitled)
        #expect(state.revocationType == .familyRevoke)
    }

    /// A non-renewing subscription keeps the expiry its transaction carries (entitlements_at compares it with the
    /// time of asking; EntitlementsNowTests).
    @Test func nonRenewingEndsAtExpiry() throws {
        let state = try state(lifecycle.ids.nonRenewing)
        #expect(state.productType == .nonRenewing)
        #expect(state.entitled)
        #expect(state.expiresAt != nil)
    }

    /// CONSUMPTION_REQUEST and REFUND_DECLINED change nothing.
    @Test func consumptionRequestAndDeclinedRefundChangeNothing() throws {
        let state = try state(lifecycle.ids.declinedConsumable)
        #expect(state.entitled)
        #expect(state.revokedAt == nil)
    }

    /// Subscription facts make no purchase rows.
    @Test func subscriptionsAreNotPurchases() {
        #expect(PurchaseProjection.foldAll(SubscriptionLifecycles.renewThenExpire().facts).isEmpty)
        #expect(PurchaseProjection.foldAll(lifecycle.facts).count == 5)
    }
}
