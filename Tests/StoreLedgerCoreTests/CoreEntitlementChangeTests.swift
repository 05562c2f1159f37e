import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The entitlement diff that will drive outgoing webhooks.
@Suite("Core: entitlement changes")
struct CoreEntitlementChangeTests {
    /// The kinds of change seen while folding a builder's facts one signed fact at a time.
    func changes(_ facts: [LedgerFact]) -> [EntitlementChange] {
        var previous: SubscriptionState?
        var result: [EntitlementChange] = []
        for length in 1...facts.count {
            let state = SubscriptionProjection.fold(facts.prefix(length))
            if let change = EntitlementChange.between(previous, state) { result.append(change) }
            previous = state
        }
        return result
    }

    /// buy, renewals, auto-renew off and expiry each report their change.
    @Test func renewThenExpire() {
        let kinds = changes(SubscriptionLifecycles.renewThenExpire().facts).map(\.kind)
        #expect(kinds == [.started, .renewed, .renewed, .renewed, .autoRenewDisabled, .expired])
    }

    /// A grace period is a billing issue that keeps entitlement until it expires.
    @Test func graceExpiresThenRecover() {
        let result = changes(SubscriptionLifecycles.graceExpiresThenRecover().facts)
        #expect(result.map(\.kind) == [.started, .billingIssue, .billingIssue, .billingRecovered])
        #expect(result.map(\.entitlementChanged) == [true, false, true, true])
    }

    /// An upgrade is a product change; a refund and its reversal flip entitlement.
    @Test func upgradeRefundReversed() {
        let kinds = changes(SubscriptionLifecycles.upgradeRefundReversed().facts).map(\.kind)
        #expect(kinds == [.started, .productChanged, .refunded, .refundReversed])
    }

    /// A Family Sharing revoke is reported as revoked, not refunded.
    @Test func familyRevoke() {
        let kinds = changes(SubscriptionLifecycles.familyRevoke().facts).map(\.kind)
        #expect(kinds == [.started, .renewed, .revoked])
    }

    /// A scheduled downgrade changes the renewal product; the renewal changes the product.
    @Test func downgrade() {
        let kinds = changes(SubscriptionLifecycles.downgradeThenRenew().facts).map(\.kind)
        #expect(kinds == [.started, .renewalProductChanged, .productChanged])
    }

    /// Extension, billing issue, expiry and resubscription.
    @Test func resubscribe() {
        let kinds = changes(SubscriptionLifecycles.billingRetryExpireResubscribe().facts).map(\.kind)
        #expect(kinds == [.started, .extended, .billingIssue, .expired, .resubscribed])
    }

    /// Xcode signs fractional milliseconds, the read model stores whole ones: a row read back is no "extension" of
    /// the same expiry folded again, whichever way its fraction rounds; a later millisecond is.
    @Test func anExpiryIsComparedAtTheStoredPrecision() throws {
        let base = try #require(SubscriptionProjection.fold(SubscriptionLifecycles.renewThenExpire().facts.prefix(1)))
        func with(_ milliseconds: Double) -> SubscriptionState {
            var state = base
            state.expiresAt = Timestamp(millisecondsSince1970: milliseconds)
            return state
        }
        #expect(EntitlementChange.between(with(1_700_358_336_049), with(1_700_358_336_049.3)) == nil)
        #expect(EntitlementChange.between(with(1_700_358_336_050), with(1_700_358_336_049.7297)) == nil)
        #expect(EntitlementChange.between(with(1_700_358_336_049), with(1_700_358_336_050.2))?.kind == .extended)
    }

    /// A row built from a transaction alone (the app posted it before Apple's SUBSCRIBED arrived, seed 000) knows no
    /// renewal preferences: the first renewal info is no "renewal product changed" when it names the current product,
    /// and says the customer cancelled when auto-renew is off. Before, both were announced as renewal_product_changed,
    /// so a host tracking cancellations from webhooks never learned of this one.
    @Test func theFirstRenewalInfoIsAChangeOnlyWhenItSaysOne() throws {
        var posted = SubscriptionState(environment: .sandbox, originalTransactionID: "8800", status: .active)
        posted.productID = "com.example.monthly"
        posted.entitled = true
        posted.latestTransactionID = "8800"
        func told(autoRenew: Bool, product: ProductID) -> SubscriptionState {
            var state = posted
            state.autoRenew = autoRenew
            state.autoRenewProductID = product
            return state
        }
        #expect(EntitlementChange.between(posted, told(autoRenew: true, product: "com.example.monthly")) == nil)
        #expect(EntitlementChange.between(posted, told(autoRenew: false, product: "com.example.monthly"))?.kind == .autoRenewDisabled)
        #expect(EntitlementChange.between(posted, told(autoRenew: true, product: "com.example.yearly"))?.kind == .renewalProductChanged)
        // Once known, changes are changes, as before; a cancellation outranks a product change in the same fact.
        let known = told(autoRenew: true, product: "com.example.monthly")
        #expect(EntitlementChange.between(known, told(autoRenew: true, product: "com.example.yearly"))?.kind == .renewalProductChanged)
        #expect(EntitlementChange.between(known, told(autoRenew: false, product: "com.example.yearly"))?.kind == .autoRenewDisabled)
        #expect(EntitlementChange.between(told(autoRenew: false, product: "com.example.monthly"), known)?.kind == .autoRenewEnabled)
    }

    /// A one-time purchase: purchased, refunded, refund reversed.
    @Test func purchases() {
        let lifecycle = PurchaseLifecycles.all()
        let key = PurchaseKey(environment: .sandbox, transactionID: lifecycle.ids.reversedNonConsumable)
        var previous: PurchaseState?
        var kinds: [EntitlementChange.Kind] = []
        for length in 1...lifecycle.facts.count {
            let state = PurchaseProjection.fold(lifecycle.facts.prefix(length), key: key)
            if let change = EntitlementChange.between(previous, state) { kinds.append(change.kind) }
            previous = state
        }
        #expect(kinds == [.purchased, .refunded, .refundReversed])
    }

    /// A family member's copy of a one-time purchase revoked without a revocationType (before 2025) is revoked, not
    /// refunded, as a subscription's is: the refund is the purchaser's. With FAMILY_REVOKE, and a purchased copy, as before.
    @Test(arguments: [
        (OwnershipType.familyShared, RevocationType?.none, EntitlementChange.Kind.revoked),
        (.familyShared, .familyRevoke, .revoked),
        (.purchased, nil, .refunded),
        (.purchased, .refundFull, .refunded),
    ])
    func aPurchaseRevokedFromAFamilyMemberIsRevoked(ownership: OwnershipType, type: RevocationType?, expected: EntitlementChange.Kind) {
        var owned = PurchaseState(environment: .sandbox, transactionID: "7")
        owned.ownership = ownership
        owned.entitled = true
        var revoked = owned
        revoked.entitled = false
        revoked.revokedAt = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        revoked.revocationType = type
        #expect(EntitlementChange.between(owned, revoked)?.kind == expected)
    }
}
