package import Foundation

/// One thing that happened to a subscription or purchase, as signed by Apple: a notification (with the transaction
/// and renewal info it carried) or a transaction that arrived on its own (posted by an app, fetched from Apple).
package struct TimelineEntry: Sendable, Equatable {
    /// `notification`, `transaction`, `renewal info`, or `ownership` (the purchase linked to a user, or moved to another).
    package var kind: String
    /// When Apple signed it (for an ownership change: when it was recorded).
    package var signedAt: Date
    /// The notification type (`DID_RENEW`, …), `TRANSACTION` for a transaction on its own, or `LINKED` /
    /// `TRANSFERRED` for an ownership change.
    package var type: String
    /// The notification subtype, a transaction's `transactionReason` (`PURCHASE`, `RENEWAL`), or an ownership change's
    /// users and reason (`user-1 → user-2 (restore)`).
    package var subtype: String?
    /// The product.
    package var productID: String?
    /// The price in milliunits of the currency (10990 = 10.99).
    package var price: Int64?
    /// The currency.
    package var currency: String?
    /// The expiry of the period the transaction pays for.
    package var expiresAt: Date?
    /// The transaction id.
    package var transactionID: String?
    /// Apple's subscription status in the notification (1 active, 2 expired, 3 billing retry, 4 grace period,
    /// 5 revoked).
    package var status: Int?
    /// Whether auto-renew was on, per the renewal info.
    package var autoRenew: Bool?
    /// When the transaction was revoked.
    package var revokedAt: Date?
    /// The end of a billing grace period, per the renewal info.
    package var gracePeriodExpiresAt: Date?
    /// The event (in the log) that brought it.
    package var eventID: Int64
    /// The notification's UUID.
    package var notificationUUID: String?
    /// When the period of its transaction was purchased (a renewal: when it began), if it carries one.
    package var purchasedAt: Date? = nil
}
