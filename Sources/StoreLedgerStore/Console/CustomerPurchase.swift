public import Foundation

/// One subscription or one-time purchase as the console's customer page shows it: its keys and its state now, read
/// from `entitlements_now` (the same definition of "entitled" the app-facing API answers with).
public struct CustomerPurchase: Sendable, Equatable {
    /// `subscription` (a row of `subscriptions`) or `purchase` (a row of `purchases`).
    public var kind: String
    /// `Production`, `Sandbox`, …
    public var environment: String
    /// The original transaction id (a one-time purchase without one: its transaction id).
    public var originalTransactionID: String
    /// The latest transaction id.
    public var transactionID: String?
    /// The product.
    public var productID: String?
    /// The app.
    public var bundleID: String?
    /// Apple's product type (`Auto-Renewable Subscription`, `Non-Consumable`, …).
    public var productType: String?
    /// The owner: the user linked to the purchase, else the owner of its appAccountToken.
    public var userID: String?
    /// The appAccountToken the app gave StoreKit.
    public var appAccountToken: String?
    /// Whether it entitles to anything now.
    public var entitledNow: Bool
    /// The entitlements it grants now.
    public var entitlements: [String]
    /// Why (not) entitled: the state, or why a product grants nothing (`entitlements_at`'s `reason`).
    public var reason: String
    /// The status at this instant (`entitlements_at`'s `status_now`).
    public var statusNow: String
    /// The read model's status (the last signed fact).
    public var status: String
    /// When the current period (or the purchase) started.
    public var purchasedAt: Date?
    /// Apple's expiry of the current period.
    public var expiresAt: Date?
    /// When the access ends by the rule (grace period, revocation, catalog period included).
    public var endsAt: Date?
    /// When it was revoked.
    public var revokedAt: Date?
    /// Whether it renews automatically (subscriptions).
    public var autoRenew: Bool?
    /// PURCHASED or FAMILY_SHARED.
    public var ownership: String?
    /// How the lookup found it: `user id`, `appAccountToken`, `originalTransactionId` or `transactionId`.
    public var matchedBy: String

    /// Who the customer is: the owning user's id, else the appAccountToken, else the original transaction id.
    public var customerKey: String {
        userID ?? appAccountToken ?? originalTransactionID
    }
}
