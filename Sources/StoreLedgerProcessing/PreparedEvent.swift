public import Foundation
public import StoreLedgerCore
public import StoreLedgerStore

/// An event after ``LedgerHandler/prepare(_:logger:)``: verified and decoded, or the reason it
/// never will be (or not yet).
public enum PreparedEvent: Sendable {
    /// A verified notification, its decoded fact and the bytes to record.
    case notification(ClaimedEvent, NotificationFact, VerifiedBytes)
    /// A verified standalone transaction or renewal info.
    case signedData(ClaimedEvent, LedgerFact, Data)
    /// Can never be processed: park as `rejected` with the reason.
    case rejected(ClaimedEvent, reason: String)
    /// Failed for a reason that may pass.
    case retry(ClaimedEvent, reason: String)

    /// The decoded bytes of a verified notification and of its nested signed data.
    public struct VerifiedBytes: Sendable {
        /// The notification payload.
        public var payload: Data
        /// The nested transaction, if any.
        public var transaction: Data?
        /// The nested renewal info, if any.
        public var renewalInfo: Data?
    }

    /// The event this came from.
    public var event: ClaimedEvent {
        switch self {
        case .notification(let event, _, _), .signedData(let event, _, _), .rejected(let event, _), .retry(let event, _): event
        }
    }
}
