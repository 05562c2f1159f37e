import Foundation
import StoreLedgerCore

/// A `subscriptions` row made from a projected ``SubscriptionState``.
struct SubscriptionRow: ReadModelRow {
    /// The `subscriptions` columns a row sets, in a fixed order.
    static let columns = [
        "environment", "original_transaction_id", "bundle_id", "product_id", "subscription_group", "status",
        "entitled", "latest_transaction_id", "purchased_at", "original_purchased_at", "expires_at",
        "grace_period_expires_at", "auto_renew", "auto_renew_product_id", "expiration_intent",
        "price_increase_status", "offer_type", "offer_id", "ownership", "app_account_token", "revoked_at",
        "revocation_reason", "revocation_type", "price", "currency", "storefront", "last_signed_at",
    ]

    /// The values by column; nil is SQL NULL.
    let values: [String: Any?]

    /// The row for a projected state.
    init(_ state: SubscriptionState) {
        values = [
            "environment": state.environment.rawValue,
            "original_transaction_id": state.originalTransactionID.rawValue,
            "bundle_id": state.bundleID?.rawValue,
            "product_id": state.productID?.rawValue,
            "subscription_group": state.subscriptionGroup?.rawValue,
            "status": state.status.rawValue,
            "entitled": state.entitled,
            "latest_transaction_id": state.latestTransactionID?.rawValue,
            "purchased_at": isoTimestamp(state.purchasedAt),
            "original_purchased_at": isoTimestamp(state.originalPurchasedAt),
            "expires_at": isoTimestamp(state.expiresAt),
            "grace_period_expires_at": isoTimestamp(state.gracePeriodExpiresAt),
            "auto_renew": state.autoRenew,
            "auto_renew_product_id": state.autoRenewProductID?.rawValue,
            "expiration_intent": state.expirationIntent?.rawValue,
            "price_increase_status": state.priceIncreaseStatus?.rawValue,
            "offer_type": state.offerType?.rawValue,
            "offer_id": state.offerID?.rawValue,
            "ownership": state.ownership?.rawValue,
            "app_account_token": state.appAccountToken?.rawValue,
            "revoked_at": isoTimestamp(state.revokedAt),
            "revocation_reason": state.revocationReason?.rawValue,
            "revocation_type": state.revocationType?.rawValue,
            "price": state.price,
            "currency": state.currency,
            "storefront": state.storefront,
            "last_signed_at": isoTimestamp(state.lastSignedAt),
        ]
    }
}
