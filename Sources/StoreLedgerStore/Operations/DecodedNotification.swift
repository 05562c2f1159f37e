/// A verified notification as recorded in `notifications`: its decoded payload and the transaction and renewal info
/// it carried, as JSON text (the nested JWS texts are kept only in the raw body).
package struct DecodedNotification: Sendable, Equatable {
    /// The notification's UUID.
    package var notificationUUID: String
    /// `notificationType`.
    package var type: String?
    /// `subtype`.
    package var subtype: String?
    /// The environment it was signed for.
    package var environment: String?
    /// The decoded notification payload (JSON, pretty-printed).
    package var payload: String
    /// The decoded `signedTransactionInfo` (JSON), if it carried one.
    package var transaction: String?
    /// The decoded `signedRenewalInfo` (JSON), if it carried one.
    package var renewalInfo: String?
}
