package import Foundation

/// One subscription or one-time purchase as the console's customer page shows it: its keys and its state now, read
/// from `entitlements_now` (the same definition of "entitled" the app-facing API answers with).
package struct CustomerPurchase: Sendable, Equatable {
    /// `subscription` (a row of `subscriptions`) or `purchase` (a row of `purchases`).
    package var kind: String
    /// `Production`, `Sandbox`, …
    package var environment: String
    /// The original transaction id (a one-time purchase without one: its transaction id).
    package var originalTransactionID: String
    /// The latest transaction id.
    package var transactionID: String?
    /// The product.
    package var productID: String?
    /// The app.
    package var bundleID: String?
    /// Apple's product type (`Auto-Renewable Subscription`, `Non-Consumable`, …).
    package var productType: String?
    /// The owner: the user linked to the purchase, else the owner of its appAccountToken.
    package var userID: String?
    /// The appAccountToken the app gave StoreKit.
    package var appAccountToken: String?
    /// Whether it entitles to anything now.
    package var entitledNow: Bool
    /// The entitlements it grants now.
    package var entitlements: [String]
    /// Why (not) entitled: the state, or why a product grants nothing (`entitlements_at`'s `reason`).
    package var reason: String
    /// The status at this instant (`entitlements_at`'s `status_now`).
    package var statusNow: String
    /// The read model's status (the last signed fact).
    package var status: String
    /// When the current period (or the purchase) started.
    package var purchasedAt: Date?
    /// Apple's expiry of the current period.
    package var expiresAt: Date?
    /// When the access ends by the rule (grace period, revocation, catalog period included).
    package var endsAt: Date?
    /// When it was revoked.
    package var revokedAt: Date?
    /// Whether it renews automatically (subscriptions).
    package var autoRenew: Bool?
    /// PURCHASED or FAMILY_SHARED.
    package var ownership: String?
    /// How the lookup found it: `user id`, `appAccountToken`, `originalTransactionId` or `transactionId`.
    package var matchedBy: String

    /// Who the customer is: the owning user's id, else the appAccountToken, else the original transaction id.
    package var customerKey: String {
        userID ?? appAccountToken ?? originalTransactionID
    }
}
