/// The `data` of a notification: the app, the environment and the nested signed transaction and renewal info.
public struct NotificationData: Hashable, Sendable, Codable {
    /// The environment the notification concerns.
    public var environment: AppStoreEnvironment?
    /// The app's Apple ID (absent in sandbox).
    public var appAppleID: Int64?
    /// The app's bundle identifier.
    public var bundleID: BundleID?
    /// The app version the purchase was made in.
    public var bundleVersion: String?
    /// The nested transaction as a compact JWS (verify it on its own).
    public var signedTransactionInfo: String?
    /// The nested renewal info as a compact JWS (verify it on its own).
    public var signedRenewalInfo: String?
    /// Apple's status of the subscription when the notification was signed.
    public var status: SubscriptionStatusCode?
    /// Why the user asked for a refund (CONSUMPTION_REQUEST).
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// An empty value; set the fields you need.
    public init() {}

    /// Apple's JSON keys.
    private enum CodingKeys: String, CodingKey {
        case environment
        case appAppleID = "appAppleId"
        case bundleID = "bundleId"
        case bundleVersion, signedTransactionInfo, signedRenewalInfo, status, consumptionRequestReason
    }
}
