package import Foundation
package import StoreLedgerCore
package import StoreLedgerStore

/// An event after ``LedgerHandler/prepare(_:logger:)``: verified and decoded, or the reason it
/// never will be (or not yet).
package enum PreparedEvent: Sendable {
    /// A verified notification, its decoded fact and the bytes to record.
    case notification(ClaimedEvent, NotificationFact, VerifiedBytes)
    /// A verified standalone transaction or renewal info.
    case signedData(ClaimedEvent, LedgerFact, Data)
    /// Can never be processed: park as `rejected` with the reason.
    case rejected(ClaimedEvent, reason: String)
    /// Failed for a reason that may pass.
    case retry(ClaimedEvent, reason: String)

    /// The decoded bytes of a verified notification and of its nested signed data.
    package struct VerifiedBytes: Sendable {
        /// The notification payload, as verified.
        package var payload: Data
        /// The notification's content digest: SHA-256 of the signing input the verifier checked
        /// (``VerifiedNotification/signingInputDigest``).
        package var contentDigest: [UInt8]
        /// The same JSON without `data.signedTransactionInfo` and `data.signedRenewalInfo`, when it was read in
        /// Apple's plain shape (nil: store `payload`, which PostgreSQL strips).
        package var payloadWithoutNestedJWS: Data? = nil
        /// The nested transaction, if any.
        package var transaction: Data?
        /// The nested renewal info, if any.
        package var renewalInfo: Data?
    }

    /// The verified notification's `notificationUUID`, for a notification.
    package var notificationUUID: NotificationUUID? {
        if case .notification(_, let fact, _) = self { fact.notificationUUID } else { nil }
    }

    /// The event this came from.
    package var event: ClaimedEvent {
        switch self {
        case .notification(let event, _, _), .signedData(let event, _, _), .rejected(let event, _), .retry(let event, _): event
        }
    }
}
