/// The `appData` of a RESCIND_CONSENT notification: the app and its signed app transaction.
public struct AppData: Hashable, Sendable, Codable {
    /// The app's Apple ID.
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The environment the notification concerns.
    public var environment: AppStoreEnvironment?
    /// The app transaction as a compact JWS (verify it on its own).
    public var signedAppTransactionInfo: String?

    /// An empty value; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case environment, signedAppTransactionInfo
    }
}
