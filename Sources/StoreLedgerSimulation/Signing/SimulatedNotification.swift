package import Foundation
package import StoreLedgerCore

/// One signed App Store Server Notification, ready to POST, with what a log line needs to describe it.
package struct SimulatedNotification: Hashable, Sendable {
    /// The compact JWS: the value of `signedPayload`.
    package let signedPayload: String
    /// The notification's UUID (Apple's retries keep it).
    package let notificationUUID: NotificationUUID?
    /// `notificationType`.
    package let type: NotificationType?
    /// `subtype`.
    package let subtype: NotificationSubtype?
    /// The original transaction id of the nested transaction (or renewal info).
    package let originalTransactionID: OriginalTransactionID?
    /// The id of the nested transaction.
    package let transactionID: TransactionID?
    /// When the notification was signed.
    package let signedDate: Timestamp?

    /// Creates a description of a signed notification.
    package init(
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
    package var body: Data {
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
    package var label: String {
        let type = type?.rawValue ?? "?"
        return subtype.map { "\(type)/\($0.rawValue)" } ?? type
    }
}
