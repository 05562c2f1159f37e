/// One row of the `purchases` read model: a consumable, non-consumable or non-renewing subscription purchase,
/// folded from its verified facts by `PurchaseProjection`.
public struct PurchaseState: Hashable, Sendable, Codable {
    /// The environment (part of the key).
    public var environment: AppStoreEnvironment
    /// The transaction id (part of the key).
    public var transactionID: TransactionID
    /// The original transaction id (equal to the transaction id for consumables).
    public var originalTransactionID: OriginalTransactionID?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The product bought.
    public var productID: ProductID?
    /// The kind of product.
    public var productType: ProductType?
    /// When it was bought.
    public var purchasedAt: Timestamp?
    /// When a non-renewing subscription ends, if Apple says.
    public var expiresAt: Timestamp?
    /// How many were bought.
    public var quantity: Int32?
    /// The price in milliunits of `currency`.
    public var price: Int64?
    /// The ISO 4217 currency of `price`.
    public var currency: String?
    /// Bought by the user or shared through Family Sharing.
    public var ownership: OwnershipType?
    /// The UUID the app attached to the purchase.
    public var appAccountToken: AppAccountToken?
    /// The storefront of the purchase.
    public var storefront: String?
    /// When it was refunded or revoked (cleared by a refund reversal).
    public var revokedAt: Timestamp?
    /// Why it was refunded.
    public var revocationReason: RevocationReason?
    /// How it was revoked.
    public var revocationType: RevocationType?
    /// Not revoked. Time-independent: what the product grants and until when is decided only by the SQL function
    /// `entitlements_at` (migration 0012), with the product catalog.
    public var entitled: Bool
    /// The latest signed date among the facts folded.
    public var lastSignedAt: Timestamp?

    /// A state with a key; everything else empty and entitled.
    public init(environment: AppStoreEnvironment, transactionID: TransactionID) {
        self.environment = environment
        self.transactionID = transactionID
        self.entitled = true
    }

    /// The row's key.
    public var key: PurchaseKey {
        PurchaseKey(environment: environment, transactionID: transactionID)
    }
}
