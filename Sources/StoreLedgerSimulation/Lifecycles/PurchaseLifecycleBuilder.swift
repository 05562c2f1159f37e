import Foundation
package import StoreLedgerCore

/// Plays the App Store for one-time purchases (consumable, non-consumable, non-renewing subscription) and
/// records the facts StoreLedger would receive: ONE_TIME_CHARGE, REFUND, REVOKE, REFUND_REVERSED, … each
/// carrying the transaction, plus transactions posted by the app.
package struct PurchaseLifecycleBuilder: Sendable {
    /// The facts recorded so far, in signing order.
    package private(set) var facts: [LedgerFact] = []
    /// The simulated clock: the signed date of the next fact; always whole milliseconds, as Apple signs (a fractional
    /// value is rounded down).
    package var now: Timestamp {
        didSet { now = now.wholeMilliseconds }
    }
    /// How far the clock moves after each signed fact, in milliseconds.
    package var step: Int64 = 1_000
    /// The environment everything is signed for.
    package let environment: AppStoreEnvironment
    /// The app.
    package let bundleID: BundleID
    /// Every purchase as Apple last signed it, by transaction id.
    package private(set) var transactions: [TransactionID: TransactionPayload] = [:]
    /// Whether each notification gets a fresh random UUID, as Apple's do (the simulator), instead of the
    /// deterministic `purchase-<n>` (tests).
    package var randomNotificationUUIDs = false
    /// The `data.appAppleId` of Production notifications (Apple leaves it out in Sandbox).
    package var appAppleID: Int64 = 1_234
    /// The number of the last transaction id handed out.
    private var nextTransactionNumber: Int
    /// The number of the next notification UUID.
    private var nextNotificationNumber = 1

    /// Sets up an app with no purchases; transaction ids count up from `firstTransactionNumber + 1`.
    package init(
        start: Timestamp = 1_700_000_000_000,
        environment: AppStoreEnvironment = .sandbox,
        bundleID: BundleID = "com.example.app",
        firstTransactionNumber: Int = 5_000
    ) {
        self.nextTransactionNumber = firstTransactionNumber
        self.now = start.wholeMilliseconds
        self.environment = environment
        self.bundleID = bundleID
    }

    /// A purchase (ONE_TIME_CHARGE); returns its transaction id.
    @discardableResult
    package mutating func buy(
        _ productID: ProductID,
        type: ProductType,
        quantity: Int32 = 1,
        price: Int64 = 990,
        expiresAfter: Int64? = nil,
        ownership: OwnershipType = .purchased,
        appAccountToken: AppAccountToken? = nil
    ) -> TransactionID {
        nextTransactionNumber += 1
        let id = TransactionID(String(nextTransactionNumber))
        var transaction = TransactionPayload()
        transaction.transactionID = id
        transaction.originalTransactionID = OriginalTransactionID(id.rawValue)
        transaction.bundleID = bundleID
        transaction.productID = productID
        transaction.type = type
        transaction.purchaseDate = now
        transaction.originalPurchaseDate = now
        transaction.expiresDate = expiresAfter.map { now.adding(milliseconds: $0) }
        transaction.quantity = quantity
        transaction.price = price
        transaction.currency = "EUR"
        transaction.inAppOwnershipType = ownership
        transaction.appAccountToken = appAccountToken
        transaction.environment = environment
        transaction.storefront = "FRA"
        transaction.storefrontID = "143442"
        transaction.transactionReason = .purchase
        transactions[id] = transaction
        notify(.oneTimeCharge, about: id)
        return id
    }

    /// The app posts a purchase's transaction (StoreKit 2), signed now.
    package mutating func appPosts(_ id: TransactionID) {
        guard var transaction = transactions[id] else { return }
        transaction.signedDate = now
        facts.append(.transaction(transaction))
        tick()
    }

    /// A purchase is refunded (REFUND).
    package mutating func refund(_ id: TransactionID, reason: RevocationReason = .other) {
        transactions[id]?.revocationDate = now
        transactions[id]?.revocationReason = reason
        transactions[id]?.revocationType = .refundFull
        notify(.refund, about: id)
    }

    /// A refund is reversed (REFUND_REVERSED).
    package mutating func reverseRefund(_ id: TransactionID) {
        transactions[id]?.revocationDate = nil
        transactions[id]?.revocationReason = nil
        transactions[id]?.revocationType = nil
        notify(.refundReversed, about: id)
    }

    /// Family Sharing access to a purchase is revoked (REVOKE).
    package mutating func familyRevoke(_ id: TransactionID) {
        transactions[id]?.revocationDate = now
        transactions[id]?.revocationType = .familyRevoke
        notify(.revoke, about: id)
    }

    /// A notification about a purchase that changes nothing (CONSUMPTION_REQUEST, REFUND_DECLINED, …).
    package mutating func notifyWithoutEffect(_ type: NotificationType, about id: TransactionID) {
        notify(type, about: id)
    }

    /// Signs a notification carrying a purchase's transaction, now.
    private mutating func notify(_ type: NotificationType, about id: TransactionID) {
        var transaction = transactions[id]
        transaction?.signedDate = now
        var data = NotificationData()
        data.environment = environment
        data.appAppleID = environment == .production ? appAppleID : nil
        data.bundleID = bundleID
        data.bundleVersion = "1.0"
        data.signedTransactionInfo = "jws.transaction.\(id.rawValue)"
        if type == .consumptionRequest { data.consumptionRequestReason = .unintendedPurchase }
        var payload = NotificationPayload()
        payload.notificationType = type
        payload.notificationUUID =
            randomNotificationUUIDs
            ? NotificationUUID(UUID().uuidString.lowercased())
            : NotificationUUID("purchase-\(nextNotificationNumber)")
        payload.version = "2.0"
        payload.signedDate = now
        payload.data = data
        nextNotificationNumber += 1
        facts.append(.notification(NotificationFact(payload: payload, transaction: transaction)))
        tick()
    }

    /// Moves the clock one step after a signature.
    private mutating func tick() {
        now = now.adding(milliseconds: step)
    }
}
