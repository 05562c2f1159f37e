package import Foundation

/// One purchase a user holds — an auto-renewable subscription or a one-time purchase (consumable, non-consumable,
/// non-renewing subscription) — as `entitlements_at(t)` (migration 0012) reads it at an instant: what it grants
/// through the product catalog and whether it grants it then. The rule lives in that SQL function only; this type
/// carries its answer, so every route and the SQL agree.
package struct Entitlement: Sendable, Equatable {
    /// Which read-model table the row comes from.
    package enum Kind: String, Sendable, Equatable {
        /// A row of `subscriptions`.
        case subscription
        /// A row of `purchases`.
        case purchase
    }

    /// Which table.
    package var kind: Kind
    /// `Production`, `Sandbox` or `Xcode`.
    package var environment: String
    /// The original transaction id (a purchase without one uses its transaction id).
    package var originalTransactionID: String
    /// The latest transaction id.
    package var transactionID: String?
    /// The app (`bundleId`) the purchase was made in.
    package var bundleID: String?
    /// The product.
    package var productID: String?
    /// Apple's product type (`Auto-Renewable Subscription` for subscriptions).
    package var productType: String?
    /// The stored status, as the last signed fact left it (`active`, `grace_period`, `billing_retry`, `expired`,
    /// `revoked`; purchases `active` or `revoked`).
    package var status: String
    /// The status at the instant asked about: `active`, `grace_period`, `billing_retry`, `expired`, `revoked` or
    /// `consumed` (a consumable that grants nothing).
    package var statusNow: String
    /// What the product grants (through the catalog), whether or not it grants it at the instant.
    package var entitlements: [String]
    /// Whether it grants `entitlements` at the instant asked about.
    package var entitledNow: Bool
    /// Why it does or does not entitle (`active`, `grace_period`, `lifetime`, `expired`, `grace_period_ended`,
    /// `billing_retry`, `revoked`, `no_duration`, `consumable`, `not_in_catalog`, `no_entitlements`).
    package var reason: String
    /// When the access it gives ends or ended (nil: no end, or it grants nothing).
    package var endsAt: Date?
    /// When it was (last) purchased.
    package var purchasedAt: Date?
    /// When the current period ends (subscriptions; non-renewing subscriptions when Apple says).
    package var expiresAt: Date?
    /// When the billing grace period ends.
    package var gracePeriodExpiresAt: Date?
    /// When Apple revoked it.
    package var revokedAt: Date?
    /// Whether it renews (subscriptions).
    package var autoRenew: Bool?
    /// `PURCHASED` or `FAMILY_SHARED`.
    package var ownership: String?
    /// The appAccountToken the app set.
    package var appAccountToken: String?

    /// The date an app answer shows as its expiry: when access ends or ended (``endsAt``: a grace period's end, a
    /// revocation), else the period's own end. A premium answer never carries a date already past, and a lapsed one
    /// never a date still ahead.
    package var accessEndsAt: Date? { endsAt ?? expiresAt }

    /// Creates an entitlement row.
    package init(
        kind: Kind, environment: String, originalTransactionID: String, transactionID: String?, bundleID: String? = nil, productID: String?,
        productType: String?, status: String, statusNow: String, entitlements: [String], entitledNow: Bool, reason: String,
        endsAt: Date?, purchasedAt: Date?, expiresAt: Date?, gracePeriodExpiresAt: Date?, revokedAt: Date?, autoRenew: Bool?,
        ownership: String?, appAccountToken: String?
    ) {
        self.kind = kind
        self.environment = environment
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.bundleID = bundleID
        self.productID = productID
        self.productType = productType
        self.status = status
        self.statusNow = statusNow
        self.entitlements = entitlements
        self.entitledNow = entitledNow
        self.reason = reason
        self.endsAt = endsAt
        self.purchasedAt = purchasedAt
        self.expiresAt = expiresAt
        self.gracePeriodExpiresAt = gracePeriodExpiresAt
        self.revokedAt = revokedAt
        self.autoRenew = autoRenew
        self.ownership = ownership
        self.appAccountToken = appAccountToken
    }

    /// Whether it grants `entitlement` at the instant it was read at.
    package func grants(_ entitlement: String) -> Bool {
        entitledNow && entitlements.contains(entitlement)
    }
}
