/// A decoded App Store Server Notification V2 (`ResponseBodyV2DecodedPayload`).
///
/// Exactly one of `data`, `summary`, `externalPurchaseToken` and `appData` is normally present. Every field is
/// optional and the type and subtype are open, so no notification Apple sends fails to decode.
public struct NotificationPayload: Hashable, Sendable, Codable {
    /// What happened.
    public var notificationType: NotificationType?
    /// Detail of what happened, for some types.
    public var subtype: NotificationSubtype?
    /// The notification's unique id; Apple's retries keep it.
    public var notificationUUID: NotificationUUID?
    /// The notification format version ("2.0").
    public var version: String?
    /// When the App Store signed the notification; retries keep it. Order notifications by it.
    public var signedDate: Timestamp?
    /// The app and signed transaction/renewal info, for purchase-related notifications.
    public var data: NotificationData?
    /// The outcome of a mass renewal-date extension (RENEWAL_EXTENSION/SUMMARY).
    public var summary: NotificationSummary?
    /// An external purchase token (EXTERNAL_PURCHASE_TOKEN).
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// The app transaction (RESCIND_CONSENT).
    public var appData: AppData?

    /// An empty payload; set the fields you need.
    public init() {}
}
