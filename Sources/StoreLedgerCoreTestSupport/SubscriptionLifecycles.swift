package import StoreLedgerCore
package import StoreLedgerSimulation

/// The realistic subscription lifecycles the projection tests share, each built with and without Apple's
/// `data.status` so the type-implied fallback is covered too. The scripts (`play…`) are the ones
/// `storeledger simulate` plays (StoreLedgerSimulation); only ids, products and environment are the tests' own.
package enum SubscriptionLifecycles {
    /// One period, in milliseconds.
    package static let period: Int64 = 30 * 86_400_000
    /// A day, in milliseconds.
    package static let day: Int64 = 86_400_000

    /// buy → renew ×3 → auto-renew off → expire.
    package static func renewThenExpire(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "1000", includesStatus: includesStatus)
        b.playRenewalsThenExpiry(renewals: 3)
        return b
    }

    /// Facts all signed at one instant: buy, the app posts the transaction, auto-renew off, the API's renewal info,
    /// refund (only the tie-breaks by kind, id and content order them).
    package static func signedAtOneInstant() -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder()
        b.step = 0
        b.subscribe()
        b.appPostsCurrentTransaction()
        b.setAutoRenew(false)
        b.apiReturnsRenewalInfo()
        b.refund()
        return b
    }

    /// buy → renewal fails into a 16-day grace period → recovers in the grace period.
    package static func graceThenRecover(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "2000", includesStatus: includesStatus)
        b.playGracePeriodRecovery()
        return b
    }

    /// buy → grace period → grace expires (billing retry) → recovers.
    package static func graceExpiresThenRecover(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "2500", includesStatus: includesStatus)
        b.playGracePeriodExpiryThenRecovery()
        return b
    }

    /// buy → the renewal fails 12 hours before the period ends, into a 16-day grace period → the app posts the current
    /// transaction 6 hours later (a copy of the period the failure concerns: the row stays in its grace period).
    package static func earlyFailureThenAppPosts(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "2700", includesStatus: includesStatus)
        b.subscribe()
        b.failToRenew(gracePeriod: 16 * day, early: day / 2)
        b.advance(by: day / 4)
        b.appPostsCurrentTransaction()
        return b
    }

    /// buy → immediate upgrade → refund → refund reversed.
    package static func upgradeRefundReversed(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "3000", productID: "com.example.basic", includesStatus: includesStatus)
        b.subscribe()
        b.advance(by: 10 * day)
        b.upgrade(to: "com.example.premium", price: 19_990)
        b.advance(by: 2 * day)
        b.refund(reason: .appIssue)
        b.advance(by: 3 * day)
        b.reverseRefund()
        return b
    }

    /// buy → renew → upgrade mid-period, of which only the app's post of the renewal re-signed as upgraded is known
    /// (the new transaction's notification still on its way): the renewal stays current, not the lapsed first period.
    package static func upgradeAwaitingItsSuccessor(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "3500", productID: "com.example.basic", includesStatus: includesStatus)
        b.subscribe()
        b.renew()
        b.advance(by: 10 * day)
        b.appPostsUpgradedTransaction()
        return b
    }

    /// A family-shared subscription → Family Sharing revoked.
    package static func familyRevoke(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "4000", ownership: .familyShared, includesStatus: includesStatus)
        b.playFamilyRevoke()
        return b
    }

    /// offer code redeemed (INITIAL_BUY) → price increase pending → accepted → renew at the new price.
    package static func offerPriceIncreaseRenew(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "5000", includesStatus: includesStatus)
        b.playOfferThenPriceIncrease(newPrice: 12_990, offerID: "SPRING")
        return b
    }

    /// buy → downgrade scheduled → renew into the cheaper product.
    package static func downgradeThenRenew(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "6000", productID: "com.example.premium", includesStatus: includesStatus)
        b.playDowngrade(to: "com.example.basic")
        return b
    }

    /// buy → billing retry → EXPIRED(BILLING_RETRY) → resubscribe, with an extension and no-effect noise.
    package static func billingRetryExpireResubscribe(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "7000", environment: .production, includesStatus: includesStatus)
        b.playBillingRetryExpiryThenResubscribe()
        return b
    }

    /// The first user's token on a purchase that expires; a second user's on the resubscription; a resubscription
    /// without a token (an offer code redeemed in the App Store); then the first period refunded late. The row's
    /// token is the second user's: the latest purchase that carries one, whatever a late fact re-signs.
    package static func tokenOfAnEarlierPeriodRefundedLate(includesStatus: Bool = true) -> SubscriptionLifecycleBuilder {
        var b = SubscriptionLifecycleBuilder(
            originalTransactionID: "8000", appAccountToken: firstUsersToken, includesStatus: includesStatus)
        b.subscribe()
        let first = b.current
        b.setAutoRenew(false)
        b.expire()
        b.advance(by: day)
        b.setAppAccountTokenForNextPurchase(secondUsersToken)
        b.subscribe(.resubscribe)
        b.setAutoRenew(false)
        b.expire()
        b.advance(by: day)
        b.setAppAccountTokenForNextPurchase(nil)
        b.subscribe(.resubscribe)
        b.advance(by: day)
        b.refundEarlierPeriod(first)
        return b
    }

    /// The token of ``tokenOfAnEarlierPeriodRefundedLate(includesStatus:)``'s first purchase.
    package static let firstUsersToken: AppAccountToken = "11111111-1111-4111-8111-111111111111"
    /// The token of its second purchase, which the row keeps.
    package static let secondUsersToken: AppAccountToken = "22222222-2222-4222-8222-222222222222"

    /// Every lifecycle, with a name and a salt for its property-test seed.
    package static func all(includesStatus: Bool) -> [(name: String, salt: UInt64, builder: SubscriptionLifecycleBuilder)] {
        [
            ("renewThenExpire", 1, renewThenExpire(includesStatus: includesStatus)),
            ("graceThenRecover", 2, graceThenRecover(includesStatus: includesStatus)),
            ("graceExpiresThenRecover", 3, graceExpiresThenRecover(includesStatus: includesStatus)),
            ("upgradeRefundReversed", 4, upgradeRefundReversed(includesStatus: includesStatus)),
            ("familyRevoke", 5, familyRevoke(includesStatus: includesStatus)),
            ("offerPriceIncreaseRenew", 6, offerPriceIncreaseRenew(includesStatus: includesStatus)),
            ("downgradeThenRenew", 7, downgradeThenRenew(includesStatus: includesStatus)),
            ("billingRetryExpireResubscribe", 8, billingRetryExpireResubscribe(includesStatus: includesStatus)),
            ("upgradeAwaitingItsSuccessor", 9, upgradeAwaitingItsSuccessor(includesStatus: includesStatus)),
            ("tokenOfAnEarlierPeriodRefundedLate", 10, tokenOfAnEarlierPeriodRefundedLate(includesStatus: includesStatus)),
            ("earlyFailureThenAppPosts", 11, earlyFailureThenAppPosts(includesStatus: includesStatus)),
        ]
    }
}
