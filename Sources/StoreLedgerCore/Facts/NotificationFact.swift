/// A verified notification together with its nested signed payloads, each decoded after its own verification.
public struct NotificationFact: Hashable, Sendable, Codable {
    /// The decoded notification.
    public var payload: NotificationPayload
    /// The decoded `data.signedTransactionInfo`, when present and verified.
    public var transaction: TransactionPayload?
    /// The decoded `data.signedRenewalInfo`, when present and verified.
    public var renewalInfo: RenewalInfoPayload?

    /// Wraps a decoded notification and its decoded nested payloads.
    public init(
        payload: NotificationPayload,
        transaction: TransactionPayload? = nil,
        renewalInfo: RenewalInfoPayload? = nil
    ) {
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
