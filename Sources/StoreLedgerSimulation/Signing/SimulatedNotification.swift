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
        // A compact JWS (base64url and dots) needs no JSON escaping; anything else goes through the serializer.
        let plain = signedPayload.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                true
            default:
                false
            }
        }
        guard plain else {
            // A dictionary of one string always encodes.
            return try! JSONSerialization.data(withJSONObject: ["signedPayload": signedPayload])
        }
        var body = Data(#"{"signedPayload":""#.utf8)
        body.append(contentsOf: signedPayload.utf8)
        body.append(contentsOf: #""}"#.utf8)
        return body
    }

    /// `TYPE` or `TYPE/SUBTYPE`.
    public var label: String {
        let type = type?.rawValue ?? "?"
        return subtype.map { "\(type)/\($0.rawValue)" } ?? type
    }
}
