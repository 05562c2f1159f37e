import Foundation
package import PostgresNIO
package import StoreLedgerCore

/// A `subscriptions` row made from a projected ``SubscriptionState``.
package struct SubscriptionRow: ReadModelRow {
    /// The `subscriptions` columns a row sets, in a fixed order.
    package static let columns = [
        "environment", "original_transaction_id", "bundle_id", "product_id", "subscription_group", "status",
        "entitled", "latest_transaction_id", "purchased_at", "original_purchased_at", "expires_at",
        "grace_period_expires_at", "auto_renew", "auto_renew_product_id", "expiration_intent",
        "price_increase_status", "offer_type", "offer_id", "ownership", "app_account_token", "revoked_at",
        "revocation_reason", "revocation_type", "price", "currency", "storefront", "last_signed_at",
    ]

    /// The values, in ``columns`` order.
    package let values: [ColumnValue]

    /// The row for a projected state.
    package init(_ state: SubscriptionState) {
        values = [
            .init(state.environment.rawValue),  // environment
            .init(state.originalTransactionID.rawValue),  // original_transaction_id
            .init(state.bundleID?.rawValue),  // bundle_id
            .init(state.productID?.rawValue),  // product_id
            .init(state.subscriptionGroup?.rawValue),  // subscription_group
            .init(state.status.rawValue),  // status
            .init(state.entitled),  // entitled
            .init(state.latestTransactionID?.rawValue),  // latest_transaction_id
            .init(state.purchasedAt),  // purchased_at
            .init(state.originalPurchasedAt),  // original_purchased_at
            .init(state.expiresAt),  // expires_at
            .init(state.gracePeriodExpiresAt),  // grace_period_expires_at
            .init(state.autoRenew),  // auto_renew
            .init(state.autoRenewProductID?.rawValue),  // auto_renew_product_id
            .init(state.expirationIntent?.rawValue),  // expiration_intent
            .init(state.priceIncreaseStatus?.rawValue),  // price_increase_status
            .init(state.offerType?.rawValue),  // offer_type
            .init(state.offerID?.rawValue),  // offer_id
            .init(state.ownership?.rawValue),  // ownership
            .init(state.appAccountToken?.rawValue),  // app_account_token
            .init(state.revokedAt),  // revoked_at
            .init(state.revocationReason?.rawValue),  // revocation_reason
            .init(state.revocationType?.rawValue),  // revocation_type
            .init(state.price),  // price
            .init(state.currency),  // currency
            .init(state.storefront),  // storefront
            .init(state.lastSignedAt),  // last_signed_at
        ]
    }
}

extension SubscriptionState: StoredRow {
    /// `subscriptions`.
    package static var table: String { "subscriptions" }
    /// `original_transaction_id`.
    package static var idColumn: String { "original_transaction_id" }
    /// The environment and original transaction id.
    package static func columns(of key: SubscriptionKey) -> (environment: String, id: String) {
        (key.environment.rawValue, key.originalTransactionID.rawValue)
    }
    /// The `subscriptions` row.
    package var readModelRow: SubscriptionRow { SubscriptionRow(self) }

    /// What describes entitlement: status, entitlement, product, latest transaction, expiry, renewal, revocation,
    /// ownership, token and signing time.
    package static var changeColumns: String {
        """
        r.environment, r.original_transaction_id, r.status, r.entitled, r.latest_transaction_id, r.product_id,
        (extract(epoch FROM r.expires_at) * 1000)::float8, r.auto_renew, r.auto_renew_product_id, r.revocation_type, r.ownership,
        r.app_account_token, (extract(epoch FROM r.last_signed_at) * 1000)::float8
        """
    }

    /// The stored state as far as ``changeColumns`` tell it.
    package init?(changeColumns c: ArraySlice<PostgresCell>) throws {
        let i = c.startIndex
        guard let environment = try c[i].decode(String?.self), let original = try c[i + 1].decode(String?.self),
            let status = SubscriptionStatus(rawValue: try c[i + 2].decode(String.self))
        else { return nil }
        self.init(environment: AppStoreEnvironment(rawValue: environment), originalTransactionID: OriginalTransactionID(original), status: status)
        entitled = try c[i + 3].decode(Bool.self)
        latestTransactionID = try c[i + 4].decode(String?.self).map(TransactionID.init)
        productID = try c[i + 5].decode(String?.self).map(ProductID.init)
        expiresAt = try c[i + 6].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
        autoRenew = try c[i + 7].decode(Bool?.self)
        autoRenewProductID = try c[i + 8].decode(String?.self).map(ProductID.init)
        revocationType = try c[i + 9].decode(String?.self).map { RevocationType(rawValue: $0) }
        ownership = try c[i + 10].decode(String?.self).map { OwnershipType(rawValue: $0) }
        appAccountToken = try c[i + 11].decode(String?.self).map(AppAccountToken.init)
        lastSignedAt = try c[i + 12].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
    }
}
