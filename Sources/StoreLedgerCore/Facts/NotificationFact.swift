/// A verified notification together with its nested signed payloads, each decoded after its own verification.
///
/// The nested signed data is held decoded only: `payload.data.signedTransactionInfo` and `signedRenewalInfo` (the
/// JWS texts, certificates included, three quarters of a notification's size) are dropped, as in the
/// `notifications` table. The raw JWS stays in the event log, byte for byte.
public struct NotificationFact: Hashable, Sendable, Codable {
    /// The decoded notification, without the JWS texts of its nested signed data.
    public var payload: NotificationPayload
    /// The decoded `data.signedTransactionInfo`, when present and verified.
    public var transaction: TransactionPayload?
    /// The decoded `data.signedRenewalInfo`, when present and verified.
    public var renewalInfo: RenewalInfoPayload?

    /// Wraps a decoded notification and its decoded nested payloads; the nested JWS texts are dropped.
    public init(
        payload: NotificationPayload,
        transaction: TransactionPayload? = nil,
        renewalInfo: RenewalInfoPayload? = nil
    ) {
        var payload = payload
        payload.data?.signedTransactionInfo = nil
        payload.data?.signedRenewalInfo = nil
        self.payload = payload
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }

    /// The notification's type.
    public var type: NotificationType? { payload.notificationType }

    /// The notification's subtype.
    public var subtype: NotificationSubtype? { payload.subtype }

    /// When Apple signed the notification.
    public var signedDate: Timestamp? { payload.signedDate }

    /// The environment: the notification data's, else the nested payloads'.
    public var environment: AppStoreEnvironment? {
        payload.data?.environment ?? payload.summary?.environment ?? payload.appData?.environment
            ?? transaction?.environment ?? renewalInfo?.environment
    }
}
