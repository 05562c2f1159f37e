import Foundation
import StoreLedgerCore

/// A `purchases` row made from a projected ``PurchaseState``.
struct PurchaseRow: ReadModelRow {
    /// The `purchases` columns a row sets, in a fixed order.
    static let columns = [
        "environment", "transaction_id", "original_transaction_id", "bundle_id", "product_id", "product_type",
        "purchased_at", "expires_at", "quantity", "price", "currency", "ownership", "app_account_token",
        "storefront", "revoked_at", "revocation_reason", "revocation_type", "entitled", "last_signed_at",
    ]

    /// The values by column; nil is SQL NULL.
    let values: [String: Any?]

    /// The row for a projected state.
    init(_ state: PurchaseState) {
        values = [
            "environment": state.environment.rawValue,
            "transaction_id": state.transactionID.rawValue,
            "original_transaction_id": state.originalTransactionID?.rawValue,
            "bundle_id": state.bundleID?.rawValue,
            "product_id": state.productID?.rawValue,
            "product_type": state.productType?.rawValue,
            "purchased_at": isoTimestamp(state.purchasedAt),
            "expires_at": isoTimestamp(state.expiresAt),
            "quantity": state.quantity,
            "price": state.price,
            "currency": state.currency,
            "ownership": state.ownership?.rawValue,
            "app_account_token": state.appAccountToken?.rawValue,
            "storefront": state.storefront,
            "revoked_at": isoTimestamp(state.revokedAt),
            "revocation_reason": state.revocationReason?.rawValue,
            "revocation_type": state.revocationType?.rawValue,
            "entitled": state.entitled,
            "last_signed_at": isoTimestamp(state.lastSignedAt),
        ]
    }
}
