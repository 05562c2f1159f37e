public import Foundation

/// One thing that happened to a subscription or purchase, as signed by Apple: a notification (with the transaction
/// and renewal info it carried) or a transaction that arrived on its own (posted by an app, fetched from Apple).
public struct TimelineEntry: Sendable, Equatable {
    /// `notification` or `transaction`.
    public var kind: String
    /// When Apple signed it.
    public var signedAt: Date
    /// The notification type (`DID_RENEW`, …), or `TRANSACTION` for a transaction on its own.
    public var type: String
    /// The notification subtype, or a transaction's `transactionReason` (`PURCHASE`, `RENEWAL`).
    public var subtype: String?
    /// The product.
    public var productID: String?
    /// The price in milliunits of the currency (10990 = 10.99).
    public var price: Int64?
    /// The currency.
    public var currency: String?
    /// The expiry of the period the transaction pays for.
    public var expiresAt: Date?
    /// The transaction id.
    public var transactionID: String?
    /// Apple's subscription status in the notification (1 active, 2 expired, 3 billing retry, 4 grace period,
    /// 5 revoked).
    public var status: Int?
    /// Whether auto-renew was on, per the renewal info.
    public var autoRenew: Bool?
    /// When the transaction was revoked.
    public var revokedAt: Date?
    /// The end of a billing grace period, per the renewal info.
    public var gracePeriodExpiresAt: Date?
    /// The event (in the log) that brought it.
    public var eventID: Int64
    /// The notification's UUID.
    public var notificationUUID: String?
}
