public import Foundation
public import StoreLedgerCore

/// One signed App Store Server Notification, ready to POST, with what a log line needs to describe it.
public struct SimulatedNotification: Hashable, Sendable {
    /// The compact JWS: the value of `signedPayload`.
    public let signedPayload: String
    /// The notification's UUID (Apple's retries keep it).
    public let notificationUUID: NotificationUUID?
    /// `notificationType`.
    public let type: NotificationType?
    /// `subtype`.
    public let subtype: NotificationSubtype?
    /// The original transaction id of the nested transaction (or renewal info).
    public let originalTransactionID: OriginalTransactionID?
    /// The id of the nested transaction.
    public let transactionID: TransactionID?
    /// When the notification was signed.
    public let signedDate: Timestamp?

    /// Creates a description of a signed notification.
    public init(
        signedPayload: String,
        notificationUUID: NotificationUUID?,
        type: NotificationType?,
        subtype: NotificationSubtype?,
        originalTransactionID: OriginalTransactionID?,
        transactionID: TransactionID?,
        signedDate: Timestamp?
    ) {
        self.signedPayload = signedPayload
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.signedDate = signedDate
    }

    /// The HTTP body Apple sends: `{"signedPayload":"<JWS>"}`.
    public var body: Data {
        // A dictionary of one string always encodes.
        try! JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])
    }

    /// `TYPE` or `TYPE/SUBTYPE`.
    public var label: String {
        let type = type?.rawValue ?? "?"
        return subtype.map { "\(type)/\($0.rawValue)" } ?? type
    }
}
