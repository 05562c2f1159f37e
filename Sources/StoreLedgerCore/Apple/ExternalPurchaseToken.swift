/// The `externalPurchaseToken` of an EXTERNAL_PURCHASE_TOKEN notification.
public struct ExternalPurchaseToken: Hashable, Sendable, Codable {
    /// The token's id; sandbox ids start with "SANDBOX".
    public var externalPurchaseID: String?
    /// When the token was created.
    public var tokenCreationDate: Timestamp?
    /// The app's Apple ID.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: BundleID?

    /// An empty value; set the fields you need.
    public init() {}

    /// Whether the token is from the sandbox (Apple marks those by an id starting with "SANDBOX").
    public var isSandbox: Bool {
        externalPurchaseID?.hasPrefix("SANDBOX") ?? false
    }

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case externalPurchaseID = "externalPurchaseId"
        case tokenCreationDate
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
    }
}
