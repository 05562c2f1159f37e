/// A verified notification as recorded in `notifications`: its decoded payload and the transaction and renewal info
/// it carried, as JSON text (the nested JWS texts are kept only in the raw body).
public struct DecodedNotification: Sendable, Equatable {
    /// The notification's UUID.
    public var notificationUUID: String
    /// `notificationType`.
    public var type: String?
    /// `subtype`.
    public var subtype: String?
    /// The environment it was signed for.
    public var environment: String?
    /// The decoded notification payload (JSON, pretty-printed).
    public var payload: String
    /// The decoded `signedTransactionInfo` (JSON), if it carried one.
    public var transaction: String?
    /// The decoded `signedRenewalInfo` (JSON), if it carried one.
    public var renewalInfo: String?
}
