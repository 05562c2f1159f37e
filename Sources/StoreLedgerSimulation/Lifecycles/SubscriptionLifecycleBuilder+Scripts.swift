package import StoreLedgerCore

/// The realistic lifecycles, as scripts over the builder's steps. The projection tests and the simulator play the
/// same scripts; pauses are in days of a 30-day period (`period / 30`), so an accelerated period (Sandbox renews a
/// month in 5 minutes) keeps the shape.
extension SubscriptionLifecycleBuilder {
    /// A day, scaled to the period (`period / 30`).
    package var day: Int64 { period / 30 }

    /// buy → the app posts the transaction → renew ×`renewals` → 3 days → auto-renew off → expire (VOLUNTARY).
    package mutating func playRenewalsThenExpiry(renewals: Int = 3) {
        subscribe()
        appPostsCurrentTransaction()
        for _ in 0..<renewals { renew() }
        advance(by: 3 * day)
        setAutoRenew(false)
        expire(.voluntary)
    }

    /// buy → the renewal fails into a 16-day grace period → 2 days → the charge recovers.
    package mutating func playGracePeriodRecovery() {
        subscribe()
        failToRenew(gracePeriod: 16 * day)
        advance(by: 2 * day)
        recover()
    }

    /// buy → a 6-day grace period expires (billing retry) → 5 days → the server API reports the renewal info →
    /// the charge recovers.
    package mutating func playGracePeriodExpiryThenRecovery() {
        subscribe()
        failToRenew(gracePeriod: 6 * day)
        gracePeriodExpired()
        advance(by: 5 * day)
        apiReturnsRenewalInfo()
        recover()
    }

    /// buy → 10 days → immediate upgrade to `productID` → renew into the upgraded product.
    package mutating func playUpgrade(to productID: ProductID, price: Int64) {
        subscribe()
        advance(by: 10 * day)
        upgrade(to: productID, price: price)
        renew()
    }

    /// buy → 7 days → downgrade to `productID` at the next renewal → renew into it.
    package mutating func playDowngrade(to productID: ProductID) {
        subscribe()
        advance(by: 7 * day)
        downgrade(to: productID)
        renew()
    }

    /// buy → 2 days → refund (REFUND) → 3 days → refund reversed (REFUND_REVERSED).
    package mutating func playRefundReversal() {
        subscribe()
        advance(by: 2 * day)
        refund(reason: .appIssue)
        advance(by: 3 * day)
        reverseRefund()
    }

    /// buy (family-shared when the builder's ownership is `FAMILY_SHARED`) → renew → 4 days → REVOKE.
    package mutating func playFamilyRevoke() {
        subscribe()
        renew()
        advance(by: 4 * day)
        familyRevoke()
    }

    /// offer code redeemed (INITIAL_BUY) → 5 days → price increase pending → 5 days → accepted → renew at the
    /// new price.
    package mutating func playOfferThenPriceIncrease(newPrice: Int64, offerID: OfferID = "SPRING") {
        redeemOffer(.initialBuy, offerType: .offerCode, offerID: offerID)
        advance(by: 5 * day)
        priceIncrease(.pending, newPrice: newPrice)
        advance(by: 5 * day)
        priceIncrease(.accepted, newPrice: newPrice)
        renew()
    }

    /// buy → renewal extended 5 days → CONSUMPTION_REQUEST → billing retry → 10 days → EXPIRED (BILLING_RETRY) →
    /// 20 days → RESUBSCRIBE → REFUND_DECLINED (no effect). (No METADATA_UPDATE: Apple sends it only for Advanced
    /// Commerce subscriptions.)
    package mutating func playBillingRetryExpiryThenResubscribe() {
        subscribe()
        extendRenewal(by: 5 * day)
        notifyWithoutEffect(.consumptionRequest)
        failToRenew()
        advance(by: 10 * day)
        expire(.billingRetry)
        advance(by: 20 * day)
        subscribe(.resubscribe)
        notifyWithoutEffect(.refundDeclined)
    }
}
