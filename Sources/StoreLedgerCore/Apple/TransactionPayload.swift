/// A decoded signed transaction (`JWSTransactionDecodedPayload`): one purchase or renewal as the App Store
/// signed it. Every field is optional; unknown fields are ignored.
public struct TransactionPayload: Hashable, Sendable, Codable {
    /// The id of the first purchase of this product by this user; shared by all renewals.
    public var originalTransactionID: OriginalTransactionID?
    /// The id of this purchase or renewal.
    public var transactionID: TransactionID?
    /// The id of this subscription purchase event across devices.
    public var webOrderLineItemID: WebOrderLineItemID?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The product bought.
    public var productID: ProductID?
    /// The subscription group of an auto-renewable subscription.
    public var subscriptionGroupIdentifier: SubscriptionGroupID?
    /// When the App Store charged for this transaction (the start of a subscription period).
    public var purchaseDate: Timestamp?
    /// When the original transaction was bought.
    public var originalPurchaseDate: Timestamp?
    /// When this subscription period expires or renews.
    public var expiresDate: Timestamp?
    /// When the App Store signed this payload.
    public var signedDate: Timestamp?
    /// When Apple refunded or revoked this transaction; absent unless revoked.
    public var revocationDate: Timestamp?
    /// The number of consumable products bought.
    public var quantity: Int32?
    /// The kind of product.
    public var type: ProductType?
    /// The UUID the app attached to the purchase; Apple's empty string decodes as `nil`.
    public var appAccountToken: AppAccountToken?
    /// Bought by the user, or shared with them through Family Sharing.
    public var inAppOwnershipType: OwnershipType?
    /// Why the transaction was refunded.
    public var revocationReason: RevocationReason?
    /// How the transaction was revoked.
    public var revocationType: RevocationType?
    /// The refunded share of a prorated refund, in milliunits (50000 = 50%).
    public var revocationPercentage: Int32?
    /// Whether the user upgraded away from this subscription transaction.
    public var isUpgraded: Bool?
    /// The kind of offer applied.
    public var offerType: OfferType?
    /// The identifier of the offer applied.
    public var offerIdentifier: OfferID?
    /// The payment mode of the offer applied.
    public var offerDiscountType: OfferDiscountType?
    /// The offer's duration as an ISO 8601 period.
    public var offerPeriod: String?
    /// The environment that signed the transaction.
    public var environment: AppStoreEnvironment?
    /// The three-letter storefront country code.
    public var storefront: String?
    /// Apple's storefront identifier.
    public var storefrontID: String?
    /// Purchase or renewal.
    public var transactionReason: TransactionReason?
    /// The ISO 4217 currency of `price`.
    public var currency: String?
    /// The price in milliunits of `currency` (10990 = 10.99).
    public var price: Int64?
    /// The id of the app download transaction.
    public var appTransactionID: AppTransactionID?

    /// An empty payload; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case transactionID = "transactionId"
        case webOrderLineItemID = "webOrderLineItemId"
        case bundleID = "bundleId"
        case productID = "productId"
        case subscriptionGroupIdentifier, purchaseDate, originalPurchaseDate, expiresDate, signedDate
        case revocationDate, quantity, type, appAccountToken, inAppOwnershipType, revocationReason
        case revocationType, revocationPercentage, isUpgraded, offerType, offerIdentifier, offerDiscountType
        case offerPeriod, environment, storefront
        case storefrontID = "storefrontId"
        case transactionReason, currency, price
        case appTransactionID = "appTransactionId"
    }

    /// Decodes Apple's JSON; reads an empty `appAccountToken` as none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionID = try c.decodeIfPresent(OriginalTransactionID.self, forKey: .originalTransactionID)
        transactionID = try c.decodeIfPresent(TransactionID.self, forKey: .transactionID)
        webOrderLineItemID = try c.decodeIfPresent(WebOrderLineItemID.self, forKey: .webOrderLineItemID)
        bundleID = try c.decodeIfPresent(BundleID.self, forKey: .bundleID)
        productID = try c.decodeIfPresent(ProductID.self, forKey: .productID)
        subscriptionGroupIdentifier = try c.decodeIfPresent(
            SubscriptionGroupID.self, forKey: .subscriptionGroupIdentifier)
        purchaseDate = try c.decodeIfPresent(Timestamp.self, forKey: .purchaseDate)
        originalPurchaseDate = try c.decodeIfPresent(Timestamp.self, forKey: .originalPurchaseDate)
        expiresDate = try c.decodeIfPresent(Timestamp.self, forKey: .expiresDate)
        signedDate = try c.decodeIfPresent(Timestamp.self, forKey: .signedDate)
        revocationDate = try c.decodeIfPresent(Timestamp.self, forKey: .revocationDate)
        quantity = try c.decodeIfPresent(Int32.self, forKey: .quantity)
        type = try c.decodeIfPresent(ProductType.self, forKey: .type)
        appAccountToken = try c.decodeAppAccountTokenIfPresent(forKey: .appAccountToken)
        inAppOwnershipType = try c.decodeIfPresent(OwnershipType.self, forKey: .inAppOwnershipType)
        revocationReason = try c.decodeIfPresent(RevocationReason.self, forKey: .revocationReason)
        revocationType = try c.decodeIfPresent(RevocationType.self, forKey: .revocationType)
        revocationPercentage = try c.decodeIfPresent(Int32.self, forKey: .revocationPercentage)
        isUpgraded = try c.decodeIfPresent(Bool.self, forKey: .isUpgraded)
        offerType = try c.decodeIfPresent(OfferType.self, forKey: .offerType)
        offerIdentifier = try c.decodeIfPresent(OfferID.self, forKey: .offerIdentifier)
        offerDiscountType = try c.decodeIfPresent(OfferDiscountType.self, forKey: .offerDiscountType)
        offerPeriod = try c.decodeIfPresent(String.self, forKey: .offerPeriod)
        environment = try c.decodeIfPresent(AppStoreEnvironment.self, forKey: .environment)
        storefront = try c.decodeIfPresent(String.self, forKey: .storefront)
        storefrontID = try c.decodeIfPresent(String.self, forKey: .storefrontID)
        transactionReason = try c.decodeIfPresent(TransactionReason.self, forKey: .transactionReason)
        currency = try c.decodeIfPresent(String.self, forKey: .currency)
        price = try c.decodeIfPresent(Int64.self, forKey: .price)
        appTransactionID = try c.decodeIfPresent(AppTransactionID.self, forKey: .appTransactionID)
    }
}
