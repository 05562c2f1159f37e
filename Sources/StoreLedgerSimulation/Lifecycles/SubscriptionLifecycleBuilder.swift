import Foundation
package import StoreLedgerCore

/// Plays the App Store for one auto-renewable subscription and records what it would sign: each step moves
/// the simulated subscription on and appends the facts StoreLedger would receive (a notification carrying the
/// transaction and renewal info, and sometimes a standalone transaction from the app or the server API).
///
/// Every signed fact is stamped with `now`, which then moves on by `step`, so facts are distinct and ordered
/// as Apple would have signed them. Tests then shuffle and duplicate `facts` freely.
package struct SubscriptionLifecycleBuilder: Sendable {
    /// The facts recorded so far, in signing order.
    package private(set) var facts: [LedgerFact] = []
    /// The simulated clock: the signed date of the next fact; always whole milliseconds, as Apple signs (a fractional
    /// value is rounded down).
    package var now: Timestamp {
        didSet { now = now.wholeMilliseconds }
    }
    /// How far the clock moves after each signed fact, in milliseconds.
    package var step: Int64 = 1_000
    /// The length of one subscription period, in milliseconds.
    package var period: Int64
    /// Whether notifications carry Apple's `data.status` (turn off to exercise the type-implied fallback).
    package var includesStatus: Bool
    /// Whether each notification gets a fresh random UUID, as Apple's do (the simulator), instead of the
    /// deterministic `<originalTransactionId>-<n>` (tests).
    package var randomNotificationUUIDs = false
    /// The `data.appAppleId` of Production notifications (Apple leaves it out in Sandbox).
    package var appAppleID: Int64 = 1_234
    /// The environment everything is signed for.
    package let environment: AppStoreEnvironment
    /// The app.
    package let bundleID: BundleID
    /// The subscription's original transaction id.
    package let originalTransactionID: OriginalTransactionID
    /// The current period's transaction as Apple last signed it.
    package private(set) var current: TransactionPayload
    /// The renewal info as Apple last signed it.
    package private(set) var renewalInfo: RenewalInfoPayload
    /// Apple's status of the subscription.
    package private(set) var status: SubscriptionStatusCode = .active
    /// The number of the next transaction id.
    private var nextTransactionNumber: Int
    /// The number of the next notification UUID.
    private var nextNotificationNumber = 1

    /// Sets up a subscription that has not been bought yet; call `subscribe` (or `redeemOffer`) first.
    package init(
        originalTransactionID: OriginalTransactionID = "1000",
        productID: ProductID = "com.example.monthly",
        start: Timestamp = 1_700_000_000_000,
        period: Int64 = 30 * 86_400_000,
        environment: AppStoreEnvironment = .sandbox,
        bundleID: BundleID = "com.example.app",
        subscriptionGroup: SubscriptionGroupID = "21000000",
        ownership: OwnershipType = .purchased,
        appAccountToken: AppAccountToken? = "7e3fb20b-4cdb-47cc-936d-99d65f608138",
        price: Int64 = 9_990,
        currency: String = "USD",
        includesStatus: Bool = true
    ) {
        let start = start.wholeMilliseconds
        self.now = start
        self.period = period
        self.environment = environment
        self.bundleID = bundleID
        self.originalTransactionID = originalTransactionID
        self.includesStatus = includesStatus
        self.nextTransactionNumber = (Int(originalTransactionID.rawValue) ?? 1000)

        var transaction = TransactionPayload()
        transaction.originalTransactionID = originalTransactionID
        transaction.bundleID = bundleID
        transaction.productID = productID
        transaction.subscriptionGroupIdentifier = subscriptionGroup
        transaction.originalPurchaseDate = start
        transaction.quantity = 1
        transaction.type = .autoRenewable
        transaction.appAccountToken = appAccountToken
        transaction.inAppOwnershipType = ownership
        transaction.environment = environment
        transaction.storefront = "USA"
        transaction.storefrontID = "143441"
        transaction.currency = currency
        transaction.price = price
        self.current = transaction

        var renewalInfo = RenewalInfoPayload()
        renewalInfo.originalTransactionID = originalTransactionID
        renewalInfo.productID = productID
        renewalInfo.autoRenewProductID = productID
        renewalInfo.autoRenewStatus = .on
        renewalInfo.isInBillingRetryPeriod = false
        renewalInfo.environment = environment
        renewalInfo.currency = currency
        renewalInfo.renewalPrice = price
        renewalInfo.appAccountToken = appAccountToken
        self.renewalInfo = renewalInfo
    }

    // MARK: - Clock

    /// Moves the clock on.
    package mutating func advance(by milliseconds: Int64) {
        now = now.adding(milliseconds: milliseconds)
    }

    /// Moves the clock to the end of the current period, plus an offset.
    package mutating func advanceToExpiry(plus milliseconds: Int64 = 0) {
        if let expires = current.expiresDate, expires.adding(milliseconds: milliseconds) > now {
            now = expires.adding(milliseconds: milliseconds)
        }
    }

    // MARK: - Lifecycle steps

    /// A first purchase (INITIAL_BUY) or a resubscription after expiry (RESUBSCRIBE): SUBSCRIBED.
    package mutating func subscribe(
        _ subtype: NotificationSubtype = .initialBuy,
        productID: ProductID? = nil,
        offerType: OfferType? = nil,
        offerID: OfferID? = nil
    ) {
        startPeriod(productID: productID, reason: .purchase, offerType: offerType, offerID: offerID, at: now)
        renewalInfo.autoRenewStatus = .on
        renewalInfo.expirationIntent = nil
        renewalInfo.isInBillingRetryPeriod = false
        renewalInfo.gracePeriodExpiresDate = nil
        status = .active
        notify(.subscribed, subtype)
    }

    /// An offer or offer code redeemed: INITIAL_BUY / RESUBSCRIBE / UPGRADE start a period with the offer;
    /// DOWNGRADE or none apply it at the next renewal.
    package mutating func redeemOffer(
        _ subtype: NotificationSubtype?,
        offerType: OfferType = .offerCode,
        offerID: OfferID = "SPRING"
    ) {
        switch subtype {
        case .initialBuy?, .resubscribe?, .upgrade?:
            startPeriod(productID: nil, reason: .purchase, offerType: offerType, offerID: offerID, at: now)
            status = .active
        default:
            renewalInfo.offerType = offerType
            renewalInfo.offerIdentifier = offerID
        }
        notify(.offerRedeemed, subtype)
    }

    /// The next period, charged at the end of the current one (DID_RENEW); pending renewal product and offers
    /// take effect.
    package mutating func renew() {
        advanceToExpiry()
        let product = renewalInfo.autoRenewProductID ?? current.productID
        startPeriod(
            productID: product, reason: .renewal, offerType: renewalInfo.offerType,
            offerID: renewalInfo.offerIdentifier, at: current.expiresDate ?? now)
        renewalInfo.offerType = nil
        renewalInfo.offerIdentifier = nil
        status = .active
        notify(.didRenew, nil)
    }

    /// The user turns auto-renew on or off (DID_CHANGE_RENEWAL_STATUS); the period runs on.
    package mutating func setAutoRenew(_ on: Bool) {
        renewalInfo.autoRenewStatus = on ? .on : .off
        notify(.didChangeRenewalStatus, on ? .autoRenewEnabled : .autoRenewDisabled)
    }

    /// The subscription ends (EXPIRED), at the end of the period unless already past it.
    package mutating func expire(_ subtype: NotificationSubtype = .voluntary) {
        advanceToExpiry(plus: 1)
        renewalInfo.autoRenewStatus = .off
        renewalInfo.isInBillingRetryPeriod = false
        renewalInfo.gracePeriodExpiresDate = nil
        renewalInfo.expirationIntent =
            switch subtype {
            case .billingRetry: .billingError
            case .priceIncrease: .didNotConsentToPriceIncrease
            case .productNotForSale: .productNotAvailable
            default: .customerCancelled
            }
        status = .expired
        notify(.expired, subtype)
    }

    /// A renewal fails at the end of the period (DID_FAIL_TO_RENEW), or `early` milliseconds before it (Apple begins
    /// charging up to a day before): with a grace period of the given length from the period's end (GRACE_PERIOD), or
    /// straight into billing retry.
    package mutating func failToRenew(gracePeriod: Int64? = nil, early: Int64 = 0) {
        advanceToExpiry(plus: -early)
        renewalInfo.isInBillingRetryPeriod = true
        if let gracePeriod {
            renewalInfo.gracePeriodExpiresDate = (current.expiresDate ?? now).adding(milliseconds: gracePeriod)
            status = .gracePeriod
        } else {
            status = .billingRetry
        }
        notify(.didFailToRenew, gracePeriod == nil ? nil : .gracePeriod)
    }

    /// The grace period ends without a successful charge (GRACE_PERIOD_EXPIRED); billing retry goes on.
    package mutating func gracePeriodExpired() {
        if let end = renewalInfo.gracePeriodExpiresDate, end > now { now = end }
        status = .billingRetry
        notify(.gracePeriodExpired, nil)
    }

    /// A retried charge succeeds (DID_RENEW / BILLING_RECOVERY): a new period starts now.
    package mutating func recover() {
        let product = renewalInfo.autoRenewProductID ?? current.productID
        startPeriod(productID: product, reason: .renewal, offerType: nil, offerID: nil, at: now)
        renewalInfo.isInBillingRetryPeriod = false
        renewalInfo.gracePeriodExpiresDate = nil
        status = .active
        notify(.didRenew, .billingRecovery)
    }

    /// An immediate upgrade (DID_CHANGE_RENEWAL_PREF / UPGRADE): the old transaction is re-signed as upgraded
    /// (the server API would return it) and a new period of the new product starts now.
    package mutating func upgrade(to productID: ProductID, price: Int64) {
        appPostsUpgradedTransaction()
        current.price = price
        renewalInfo.renewalPrice = price
        startPeriod(productID: productID, reason: .purchase, offerType: nil, offerID: nil, at: now)
        renewalInfo.autoRenewProductID = productID
        status = .active
        notify(.didChangeRenewalPref, .upgrade)
    }

    /// A downgrade that takes effect at the next renewal (DID_CHANGE_RENEWAL_PREF / DOWNGRADE).
    package mutating func downgrade(to productID: ProductID) {
        renewalInfo.autoRenewProductID = productID
        notify(.didChangeRenewalPref, .downgrade)
    }

    /// A pending downgrade is cancelled (DID_CHANGE_RENEWAL_PREF without subtype).
    package mutating func cancelDowngrade() {
        renewalInfo.autoRenewProductID = current.productID
        notify(.didChangeRenewalPref, nil)
    }

    /// A price increase needs consent (PENDING) or was accepted (ACCEPTED).
    package mutating func priceIncrease(_ subtype: NotificationSubtype, newPrice: Int64) {
        renewalInfo.priceIncreaseStatus = subtype == .accepted ? .consented : .noResponse
        renewalInfo.renewalPrice = newPrice
        notify(.priceIncrease, subtype)
    }

    /// The current period's transaction is refunded (REFUND).
    package mutating func refund(reason: RevocationReason = .appIssue, type: RevocationType = .refundFull) {
        current.revocationDate = now
        current.revocationReason = reason
        current.revocationType = type
        status = .revoked
        notify(.refund, nil)
    }

    /// An earlier period's transaction (as it was then) is refunded while a later period runs (REFUND): Apple re-signs
    /// that transaction now, with its revocation; the notification names it, not the current one.
    package mutating func refundEarlierPeriod(_ earlier: TransactionPayload, reason: RevocationReason = .other) {
        var refunded = earlier
        refunded.revocationDate = now
        refunded.revocationReason = reason
        refunded.revocationType = .refundFull
        notify(.refund, nil, transaction: refunded)
    }

    /// The app account token the next purchase carries (nil: bought where the app sets none, such as an offer code
    /// redeemed in the App Store); renewals keep the token of the purchase they renew.
    package mutating func setAppAccountTokenForNextPurchase(_ token: AppAccountToken?) {
        current.appAccountToken = token
        renewalInfo.appAccountToken = token
    }

    /// A refund is reversed (REFUND_REVERSED): the transaction is re-signed without its revocation.
    package mutating func reverseRefund() {
        current.revocationDate = nil
        current.revocationReason = nil
        current.revocationType = nil
        status = (current.expiresDate.map { $0 > now } ?? true) ? .active : .expired
        notify(.refundReversed, nil)
    }

    /// Family Sharing access is revoked (REVOKE).
    package mutating func familyRevoke() {
        current.revocationDate = now
        current.revocationReason = nil
        current.revocationType = .familyRevoke
        status = .revoked
        notify(.revoke, nil)
    }

    /// The current period is extended (RENEWAL_EXTENDED).
    package mutating func extendRenewal(by milliseconds: Int64) {
        current.expiresDate = current.expiresDate?.adding(milliseconds: milliseconds)
        notify(.renewalExtended, nil)
    }

    /// A notification that should change nothing (REFUND_DECLINED, CONSUMPTION_REQUEST, …),
    /// carrying the current transaction and renewal info.
    package mutating func notifyWithoutEffect(_ type: NotificationType, _ subtype: NotificationSubtype? = nil) {
        notify(type, subtype)
    }

    /// The app posts the current transaction re-signed now with `isUpgraded` (StoreKit 2 delivers it on an upgrade;
    /// ``upgrade(to:price:)`` starts with it, before the new transaction and its notification).
    package mutating func appPostsUpgradedTransaction() {
        var upgraded = current
        upgraded.isUpgraded = true
        upgraded.signedDate = now
        facts.append(.transaction(upgraded))
        tick()
    }

    /// The app posts the current transaction (StoreKit 2), signed now.
    package mutating func appPostsCurrentTransaction() {
        var transaction = current
        transaction.signedDate = now
        facts.append(.transaction(transaction))
        tick()
    }

    /// The server API returns the renewal info, signed now.
    package mutating func apiReturnsRenewalInfo() {
        var renewal = renewalInfo
        renewal.signedDate = now
        facts.append(.renewalInfo(renewal))
        tick()
    }

    // MARK: - Signing

    /// Starts a new period (a new transaction) at an instant.
    private mutating func startPeriod(
        productID: ProductID?, reason: TransactionReason, offerType: OfferType?, offerID: OfferID?,
        at start: Timestamp
    ) {
        if start > now { now = start }
        nextTransactionNumber += 1
        current.transactionID = TransactionID(String(nextTransactionNumber))
        current.webOrderLineItemID = WebOrderLineItemID(String(nextTransactionNumber + 500_000))
        if let productID { current.productID = productID }
        current.purchaseDate = start
        current.expiresDate = start.adding(milliseconds: period)
        current.transactionReason = reason
        current.offerType = offerType
        current.offerIdentifier = offerID
        current.offerDiscountType = offerType == nil ? nil : .payUpFront
        current.isUpgraded = nil
        current.revocationDate = nil
        current.revocationReason = nil
        current.revocationType = nil
        current.price = offerType == nil ? (renewalInfo.renewalPrice ?? current.price) : 0
        renewalInfo.productID = current.productID
        renewalInfo.renewalDate = current.expiresDate
        renewalInfo.recentSubscriptionStartDate = renewalInfo.recentSubscriptionStartDate ?? start
        renewalInfo.priceIncreaseStatus = nil
    }

    /// Signs a notification carrying the current transaction (or `transaction`) and renewal info, now.
    private mutating func notify(_ type: NotificationType, _ subtype: NotificationSubtype?, transaction: TransactionPayload? = nil) {
        var transaction = transaction ?? current
        transaction.signedDate = now
        var renewal = renewalInfo
        renewal.signedDate = now

        var data = NotificationData()
        data.environment = environment
        data.appAppleID = environment == .production ? appAppleID : nil
        data.bundleID = bundleID
        data.bundleVersion = "1.0"
        data.signedTransactionInfo = "jws.transaction.\(transaction.transactionID?.rawValue ?? "")"
        data.signedRenewalInfo = "jws.renewal.\(originalTransactionID.rawValue)"
        data.status = includesStatus ? status : nil
        // Apple says why a refund was requested on every CONSUMPTION_REQUEST.
        if type == .consumptionRequest { data.consumptionRequestReason = .unintendedPurchase }

        var payload = NotificationPayload()
        payload.notificationType = type
        payload.subtype = subtype
        payload.notificationUUID =
            randomNotificationUUIDs
            ? NotificationUUID(UUID().uuidString.lowercased())
            : NotificationUUID("\(originalTransactionID.rawValue)-\(nextNotificationNumber)")
        payload.version = "2.0"
        payload.signedDate = now
        payload.data = data
        nextNotificationNumber += 1

        facts.append(.notification(NotificationFact(payload: payload, transaction: transaction, renewalInfo: renewal)))
        tick()
    }

    /// Moves the clock one step after a signature.
    private mutating func tick() {
        now = now.adding(milliseconds: step)
    }
}
