package import StoreLedgerCore

/// The lifecycles `storeledger simulate` plays, by command-line name; each is a script over
/// ``SubscriptionLifecycleBuilder`` (the same scripts the projection tests use) or ``PurchaseLifecycleBuilder``.
package enum SimulatedLifecycle: String, CaseIterable, Sendable {
    /// buy → renew ×N → auto-renew off → expire.
    case renewals
    /// buy → renewal fails into a grace period → recovers.
    case gracePeriodRecovery = "grace-recovery"
    /// buy → grace period expires into billing retry → recovers.
    case gracePeriodExpiry = "grace-expired"
    /// buy → billing retry → expires → resubscribes.
    case billingRetry = "billing-retry"
    /// buy basic → immediate upgrade to premium → renew.
    case upgrade
    /// buy premium → downgrade to basic at the next renewal → renew.
    case downgrade
    /// buy → refund → refund reversed.
    case refundReversal = "refund-reversed"
    /// family-shared subscription → renew → Family Sharing revoked.
    case familyRevoke = "family-revoke"
    /// offer code redeemed → price increase pending, then accepted → renew at the new price.
    case offerPriceIncrease = "offer-price-increase"
    /// a non-consumable bought once (ONE_TIME_CHARGE).
    case oneTimePurchase = "one-time-purchase"

    /// One line for help texts.
    package var summary: String {
        switch self {
        case .renewals: "buy → renew ×N → auto-renew off → expire"
        case .gracePeriodRecovery: "buy → billing failure in a grace period → recover"
        case .gracePeriodExpiry: "buy → grace period expires (billing retry) → recover"
        case .billingRetry: "buy → billing retry → expire → resubscribe"
        case .upgrade: "buy basic → upgrade to premium → renew"
        case .downgrade: "buy premium → downgrade to basic → renew"
        case .refundReversal: "buy → refund → refund reversed"
        case .familyRevoke: "family shared → renew → revoke"
        case .offerPriceIncrease: "offer redeemed → price increase accepted → renew"
        case .oneTimePurchase: "a one-time purchase (non-consumable)"
        }
    }

    /// Plays the lifecycle from `setup.start`; returns every fact Apple would have signed, in signing order
    /// (notifications, plus the transactions the app posts and the renewal infos the server API returns).
    package func facts(_ setup: LifecycleSetup) -> [LedgerFact] {
        switch self {
        case .oneTimePurchase:
            var builder = setup.purchaseBuilder()
            builder.buy(setup.product("lifetime"), type: .nonConsumable, price: 29_990)
            return builder.facts
        default:
            return subscriptionBuilder(setup)?.facts ?? []
        }
    }

    /// Plays the lifecycle so that its last fact is signed at `end` (Apple never signs in the future).
    package func facts(_ setup: LifecycleSetup, endingAt end: Timestamp) -> [LedgerFact] {
        let span = Self.span(of: facts(setup))
        var anchored = setup
        anchored.start = end.adding(milliseconds: -span)
        return facts(anchored)
    }

    /// The played subscription builder (its state after the last step); `nil` for a one-time purchase.
    package func subscriptionBuilder(_ setup: LifecycleSetup) -> SubscriptionLifecycleBuilder? {
        var builder: SubscriptionLifecycleBuilder
        switch self {
        case .oneTimePurchase:
            return nil
        case .renewals:
            builder = setup.subscriptionBuilder()
            builder.playRenewalsThenExpiry(renewals: setup.renewals)
        case .gracePeriodRecovery:
            builder = setup.subscriptionBuilder()
            builder.playGracePeriodRecovery()
        case .gracePeriodExpiry:
            builder = setup.subscriptionBuilder()
            builder.playGracePeriodExpiryThenRecovery()
        case .billingRetry:
            builder = setup.subscriptionBuilder()
            builder.playBillingRetryExpiryThenResubscribe()
        case .upgrade:
            builder = setup.subscriptionBuilder(productID: setup.product("basic"))
            builder.playUpgrade(to: setup.product("premium"), price: 19_990)
        case .downgrade:
            builder = setup.subscriptionBuilder(productID: setup.product("premium"), price: 19_990)
            builder.playDowngrade(to: setup.product("basic"))
        case .refundReversal:
            builder = setup.subscriptionBuilder()
            builder.playRefundReversal()
        case .familyRevoke:
            builder = setup.subscriptionBuilder(ownership: .familyShared)
            builder.playFamilyRevoke()
        case .offerPriceIncrease:
            builder = setup.subscriptionBuilder()
            builder.playOfferThenPriceIncrease(newPrice: 12_990)
        }
        return builder
    }

    /// Milliseconds from the first to the last signed date of `facts`.
    static func span(of facts: [LedgerFact]) -> Int64 {
        let dates = facts.compactMap(\.signedDate).map(\.millisecondsSince1970)
        guard let first = dates.min(), let last = dates.max() else { return 0 }
        return Int64(last - first)
    }
}
