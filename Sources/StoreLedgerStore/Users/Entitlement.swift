public import Foundation
public import StoreLedgerCore

/// One purchase a user holds, as the read model has it: an auto-renewable subscription or a one-time purchase
/// (consumable, non-consumable, non-renewing subscription).
public struct Entitlement: Sendable, Equatable {
    /// Which read-model table the row comes from.
    public enum Kind: String, Sendable, Equatable {
        /// A row of `subscriptions`.
        case subscription
        /// A row of `purchases`.
        case purchase
    }

    /// Which table.
    public var kind: Kind
    /// `Production`, `Sandbox` or `Xcode`.
    public var environment: String
    /// The original transaction id (a purchase without one uses its transaction id).
    public var originalTransactionID: String
    /// The latest transaction id.
    public var transactionID: String?
    /// The product.
    public var productID: String?
    /// Apple's product type (purchases only).
    public var productType: String?
    /// `active`, `grace_period`, `billing_retry`, `expired` or `revoked` (purchases: `active`, `expired`, `revoked`).
    public var status: String
    /// Whether the read model counts it as entitling (before comparing the expiry with the time of asking).
    public var entitled: Bool
    /// When it was (last) purchased.
    public var purchasedAt: Date?
    /// When the current period ends (subscriptions and non-renewing subscriptions).
    public var expiresAt: Date?
    /// When the billing grace period ends.
    public var gracePeriodExpiresAt: Date?
    /// When Apple revoked it.
    public var revokedAt: Date?
    /// Whether it renews (subscriptions).
    public var autoRenew: Bool?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var ownership: String?
    /// The appAccountToken the app set.
    public var appAccountToken: String?

    /// Creates an entitlement row.
    public init(
        kind: Kind, environment: String, originalTransactionID: String, transactionID: String?, productID: String?,
        productType: String?, status: String, entitled: Bool, purchasedAt: Date?, expiresAt: Date?,
        gracePeriodExpiresAt: Date?, revokedAt: Date?, autoRenew: Bool?, ownership: String?, appAccountToken: String?
    ) {
        self.kind = kind
        self.environment = environment
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.productID = productID
        self.productType = productType
        self.status = status
        self.entitled = entitled
        self.purchasedAt = purchasedAt
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.revokedAt = revokedAt
        self.autoRenew = autoRenew
        self.ownership = ownership
        self.appAccountToken = appAccountToken
    }

    /// Whether it entitles its holder at `date`: entitled by status, and its period (or grace period) has not
    /// ended. A purchase without an expiry (non-consumable) is active until revoked.
    public func isActive(at date: Date) -> Bool {
        guard entitled else { return false }
        if status == "grace_period", let grace = gracePeriodExpiresAt { return grace > date }
        guard let expiresAt else { return true }
        return expiresAt > date
    }

    /// The status as of `date`: the stored status, except that an `active` row whose period has ended by then
    /// reads `expired` (the read model is a fold of facts and never reads a clock).
    public func status(at date: Date) -> String {
        if status == "active" || status == "grace_period", !isActive(at: date) { return "expired" }
        return status
    }
}
