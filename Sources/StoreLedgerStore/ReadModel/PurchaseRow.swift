import Foundation
package import PostgresNIO
package import StoreLedgerCore

/// A `purchases` row made from a projected ``PurchaseState``.
package struct PurchaseRow: ReadModelRow {
    /// The `purchases` columns a row sets, in a fixed order.
    package static let columns = [
        "environment", "transaction_id", "original_transaction_id", "bundle_id", "product_id", "product_type",
        "purchased_at", "expires_at", "quantity", "price", "currency", "ownership", "app_account_token",
        "storefront", "revoked_at", "revocation_reason", "revocation_type", "entitled", "last_signed_at",
    ]

    /// The values, in ``columns`` order.
    package let values: [ColumnValue]

    /// The row for a projected state.
    package init(_ state: PurchaseState) {
        values = [
            .init(state.environment.rawValue),  // environment
            .init(state.transactionID.rawValue),  // transaction_id
            .init(state.originalTransactionID?.rawValue),  // original_transaction_id
            .init(state.bundleID?.rawValue),  // bundle_id
            .init(state.productID?.rawValue),  // product_id
            .init(state.productType?.rawValue),  // product_type
            .init(state.purchasedAt),  // purchased_at
            .init(state.expiresAt),  // expires_at
            .init(state.quantity),  // quantity
            .init(state.price),  // price
            .init(state.currency),  // currency
            .init(state.ownership?.rawValue),  // ownership
            .init(state.appAccountToken?.rawValue),  // app_account_token
            .init(state.storefront),  // storefront
            .init(state.revokedAt),  // revoked_at
            .init(state.revocationReason?.rawValue),  // revocation_reason
            .init(state.revocationType?.rawValue),  // revocation_type
            .init(state.entitled),  // entitled
            .init(state.lastSignedAt),  // last_signed_at
        ]
    }
}

extension PurchaseState: StoredRow {
    /// `purchases`.
    package static var table: String { "purchases" }
    /// `transaction_id`.
    package static var idColumn: String { "transaction_id" }
    /// The environment and transaction id.
    package static func columns(of key: PurchaseKey) -> (environment: String, id: String) {
        (key.environment.rawValue, key.transactionID.rawValue)
    }
    /// The `purchases` row.
    package var readModelRow: PurchaseRow { PurchaseRow(self) }

    /// Entitlement, revocation, product and identity, and what an announcement of a change carries: the expiry, the
    /// ownership (a family member's revocation is `revoked`, not `refunded`) and when it was last signed (the event's
    /// `occurred_at`, and part of its id).
    package static var changeColumns: String {
        """
        r.environment, r.transaction_id, r.entitled, r.revocation_type, r.product_id, r.original_transaction_id, r.app_account_token,
        (extract(epoch FROM r.expires_at) * 1000)::float8, r.ownership, (extract(epoch FROM r.last_signed_at) * 1000)::float8
        """
    }

    /// The stored state as far as ``changeColumns`` tell it.
    package init?(changeColumns c: ArraySlice<PostgresCell>) throws {
        let i = c.startIndex
        guard let environment = try c[i].decode(String?.self), let transactionID = try c[i + 1].decode(String?.self) else { return nil }
        self.init(environment: AppStoreEnvironment(rawValue: environment), transactionID: TransactionID(transactionID))
        entitled = try c[i + 2].decode(Bool?.self) ?? false
        revocationType = try c[i + 3].decode(String?.self).map { RevocationType(rawValue: $0) }
        productID = try c[i + 4].decode(String?.self).map(ProductID.init)
        originalTransactionID = try c[i + 5].decode(String?.self).map(OriginalTransactionID.init)
        appAccountToken = try c[i + 6].decode(String?.self).map(AppAccountToken.init)
        expiresAt = try c[i + 7].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
        ownership = try c[i + 8].decode(String?.self).map { OwnershipType(rawValue: $0) }
        lastSignedAt = try c[i + 9].decode(Double?.self).map { Timestamp(millisecondsSince1970: $0) }
    }
}
