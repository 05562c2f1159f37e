/// One row of the `subscriptions` read model: the state of one auto-renewable subscription, folded from its
/// verified facts by `SubscriptionProjection`. (`updated_at` is the database's.)
public struct SubscriptionState: Hashable, Sendable, Codable {
    /// The environment (part of the key).
    public var environment: AppStoreEnvironment
    /// The original transaction id (part of the key).
    public var originalTransactionID: OriginalTransactionID
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The product of the current period (changes at an upgrade, or at the renewal after a downgrade).
    public var productID: ProductID?
    /// The subscription group.
    public var subscriptionGroup: SubscriptionGroupID?
    /// The status, from the latest evidence by signed date.
    public var status: SubscriptionStatus
    /// Whether `status` entitles (active or grace period); time-independent: whether the row entitles at an instant
    /// is decided only by the SQL function `entitlements_at` (migration 0012), which compares it with the period's end.
    public var entitled: Bool
    /// The transaction of the current period.
    public var latestTransactionID: TransactionID?
    /// When the current period was bought or renewed.
    public var purchasedAt: Timestamp?
    /// When the subscription was first bought.
    public var originalPurchasedAt: Timestamp?
    /// When the current period ends.
    public var expiresAt: Timestamp?
    /// When the billing grace period ends, while there is one.
    public var gracePeriodExpiresAt: Timestamp?
    /// Whether the subscription renews at the end of the period.
    public var autoRenew: Bool?
    /// The product that renews next; differs from `productID` while a downgrade is pending.
    public var autoRenewProductID: ProductID?
    /// Why the subscription expired, once it has.
    public var expirationIntent: ExpirationIntent?
    /// Whether the user consented to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// The offer applied to the current period.
    public var offerType: OfferType?
    /// The identifier of the offer applied to the current period.
    public var offerID: OfferID?
    /// Bought by the user or shared through Family Sharing.
    public var ownership: OwnershipType?
    /// The UUID the app attached to the purchase.
    public var appAccountToken: AppAccountToken?
    /// When the current period's transaction was refunded or revoked (cleared by a refund reversal).
    public var revokedAt: Timestamp?
    /// Why it was refunded.
    public var revocationReason: RevocationReason?
    /// How it was revoked.
    public var revocationType: RevocationType?
    /// The price of the current period in milliunits of `currency`.
    public var price: Int64?
    /// The ISO 4217 currency of `price`.
    public var currency: String?
    /// The storefront of the current period's transaction.
    public var storefront: String?
    /// The latest signed date among the facts folded: how far the row's knowledge reaches.
    public var lastSignedAt: Timestamp?

    /// A state with a key and status; everything else empty.
    public init(
        environment: AppStoreEnvironment,
        originalTransactionID: OriginalTransactionID,
        status: SubscriptionStatus
    ) {
        self.environment = environment
        self.originalTransactionID = originalTransactionID
        self.status = status
        self.entitled = status.entitles
    }

    /// The row's key.
    public var key: SubscriptionKey {
        SubscriptionKey(environment: environment, originalTransactionID: originalTransactionID)
    }

    /// Takes the columns the current transaction decides (bundle, product, group, ids, dates, offer, ownership,
    /// price, storefront): the full fold and the incremental one both end here.
    mutating func takeColumns(of transaction: TransactionPayload) {
        bundleID = transaction.bundleID
        productID = transaction.productID
        subscriptionGroup = transaction.subscriptionGroupIdentifier
        latestTransactionID = transaction.transactionID
        purchasedAt = transaction.purchaseDate
        originalPurchasedAt = transaction.originalPurchaseDate
        expiresAt = transaction.expiresDate
        offerType = transaction.offerType
        offerID = transaction.offerIdentifier
        ownership = transaction.inAppOwnershipType
        price = transaction.price
        currency = transaction.currency
        storefront = transaction.storefront
    }
}
