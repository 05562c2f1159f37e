/// A decoded signed renewal info (`JWSRenewalInfoDecodedPayload`): what happens at the end of the current
/// period of an auto-renewable subscription. Has no bundle id. Every field is optional; unknown fields are
/// ignored.
public struct RenewalInfoPayload: Hashable, Sendable, Codable {
    /// The subscription this renewal info belongs to.
    public var originalTransactionID: OriginalTransactionID?
    /// The product of the current period.
    public var productID: ProductID?
    /// The product that renews next (differs from `productID` while a downgrade or crossgrade is pending).
    public var autoRenewProductID: ProductID?
    /// Whether the subscription renews.
    public var autoRenewStatus: AutoRenewStatus?
    /// Why the subscription expired; present only once it has.
    public var expirationIntent: ExpirationIntent?
    /// Whether the App Store is still trying to charge for a renewal.
    public var isInBillingRetryPeriod: Bool?
    /// When the billing grace period ends; present only in a grace period.
    public var gracePeriodExpiresDate: Timestamp?
    /// Whether the user consented to a pending price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// The kind of offer that applies at the next renewal.
    public var offerType: OfferType?
    /// The identifier of the offer that applies at the next renewal.
    public var offerIdentifier: OfferID?
    /// The payment mode of that offer.
    public var offerDiscountType: OfferDiscountType?
    /// That offer's duration as an ISO 8601 period.
    public var offerPeriod: String?
    /// When the App Store signed this payload.
    public var signedDate: Timestamp?
    /// The start of the latest run of continuous subscription periods.
    public var recentSubscriptionStartDate: Timestamp?
    /// When the subscription renews next (or expires).
    public var renewalDate: Timestamp?
    /// The price of the next renewal in milliunits of `currency`.
    public var renewalPrice: Int64?
    /// The ISO 4217 currency of `renewalPrice`.
    public var currency: String?
    /// The environment that signed the renewal info.
    public var environment: AppStoreEnvironment?
    /// The win-back offers the user is eligible for.
    public var eligibleWinBackOfferIDs: [OfferID]?
    /// The UUID the app attached to the purchase; Apple's empty string decodes as `nil`.
    public var appAccountToken: AppAccountToken?
    /// The id of the app download transaction.
    public var appTransactionID: AppTransactionID?

    /// An empty payload; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case originalTransactionID = "originalTransactionId"
        case productID = "productId"
        case autoRenewProductID = "autoRenewProductId"
        case autoRenewStatus, expirationIntent, isInBillingRetryPeriod, gracePeriodExpiresDate
        case priceIncreaseStatus, offerType, offerIdentifier, offerDiscountType, offerPeriod, signedDate
        case recentSubscriptionStartDate, renewalDate, renewalPrice, currency, environment
        case eligibleWinBackOfferIDs = "eligibleWinBackOfferIds"
        case appAccountToken
        case appTransactionID = "appTransactionId"
    }

    /// Decodes Apple's JSON; reads an empty `appAccountToken` as none.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        originalTransactionID = try c.decodeIfPresent(OriginalTransactionID.self, forKey: .originalTransactionID)
        productID = try c.decodeIfPresent(ProductID.self, forKey: .productID)
        autoRenewProductID = try c.decodeIfPresent(ProductID.self, forKey: .autoRenewProductID)
        autoRenewStatus = try c.decodeIfPresent(AutoRenewStatus.self, forKey: .autoRenewStatus)
        expirationIntent = try c.decodeIfPresent(ExpirationIntent.self, forKey: .expirationIntent)
        isInBillingRetryPeriod = try c.decodeIfPresent(Bool.self, forKey: .isInBillingRetryPeriod)
        gracePeriodExpiresDate = try c.decodeIfPresent(Timestamp.self, forKey: .gracePeriodExpiresDate)
        priceIncreaseStatus = try c.decodeIfPresent(PriceIncreaseStatus.self, forKey: .priceIncreaseStatus)
        offerType = try c.decodeIfPresent(OfferType.self, forKey: .offerType)
        offerIdentifier = try c.decodeIfPresent(OfferID.self, forKey: .offerIdentifier)
        offerDiscountType = try c.decodeIfPresent(OfferDiscountType.self, forKey: .offerDiscountType)
        offerPeriod = try c.decodeIfPresent(String.self, forKey: .offerPeriod)
        signedDate = try c.decodeIfPresent(Timestamp.self, forKey: .signedDate)
        recentSubscriptionStartDate = try c.decodeIfPresent(Timestamp.self, forKey: .recentSubscriptionStartDate)
        renewalDate = try c.decodeIfPresent(Timestamp.self, forKey: .renewalDate)
        renewalPrice = try c.decodeIfPresent(Int64.self, forKey: .renewalPrice)
        currency = try c.decodeIfPresent(String.self, forKey: .currency)
        environment = try c.decodeIfPresent(AppStoreEnvironment.self, forKey: .environment)
        eligibleWinBackOfferIDs = try c.decodeIfPresent([OfferID].self, forKey: .eligibleWinBackOfferIDs)
        appAccountToken = try c.decodeAppAccountTokenIfPresent(forKey: .appAccountToken)
        appTransactionID = try c.decodeIfPresent(AppTransactionID.self, forKey: .appTransactionID)
    }
}
