/// A decoded signed app transaction (`AppTransaction`): the user's download of the app. Minimal: the fields
/// StoreLedger reads. Every field is optional; unknown fields are ignored.
public struct AppTransactionPayload: Hashable, Sendable, Codable {
    /// The environment that signed it (`receiptType`).
    public var receiptType: AppStoreEnvironment?
    /// The app's Apple ID.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The app version the transaction was issued for.
    public var applicationVersion: String?
    /// The app version the user first bought.
    public var originalApplicationVersion: String?
    /// When the user first bought the app.
    public var originalPurchaseDate: Timestamp?
    /// When the App Store created this app transaction.
    public var receiptCreationDate: Timestamp?
    /// When the user pre-ordered the app, if they did.
    public var preorderDate: Timestamp?
    /// The id of the app download transaction.
    public var appTransactionID: AppTransactionID?
    /// The platform the user first bought the app on.
    public var originalPlatform: String?

    /// An empty payload; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case receiptType
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case applicationVersion, originalApplicationVersion, originalPurchaseDate, receiptCreationDate
        case preorderDate
        case appTransactionID = "appTransactionId"
        case originalPlatform
    }
}
