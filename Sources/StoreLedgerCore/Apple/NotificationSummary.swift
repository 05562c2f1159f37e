/// The `summary` of a RENEWAL_EXTENSION/SUMMARY notification: how a mass renewal-date extension went.
public struct NotificationSummary: Hashable, Sendable, Codable {
    /// The environment of the extension request.
    public var environment: AppStoreEnvironment?
    /// The app's Apple ID.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The product whose subscriptions were extended.
    public var productID: ProductID?
    /// The id the extension request was made with.
    public var requestIdentifier: String?
    /// The storefronts the extension covered.
    public var storefrontCountryCodes: [String]?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

    /// An empty value; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case environment
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case productID = "productId"
        case requestIdentifier, storefrontCountryCodes, succeededCount, failedCount
    }
}
