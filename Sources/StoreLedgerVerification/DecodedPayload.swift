import Foundation
package import StoreLedgerCore

/// A verified JWS's payload as StoreLedgerCore's model, when verification read the payload's claims from that model.
///
/// Verification must read a few claims (app, environment, signing date, nested JWS) before it can trust anything;
/// the ledger then needs the whole payload decoded. When the payload has Apple's plain shape (``PlainJSONReader``),
/// one read serves both: the claims come from the model, and the model is handed on with the verified result, so the
/// payload is not parsed a second time. Anything else (another shape, a mistyped claim) is read by `JSONDecoder` as
/// before and carries no decoded payload.
package enum DecodedPayload: Hashable, Sendable {
    /// A notification (with where its nested JWS members are, so that the ledger can store its text without them).
    case notification(PlainNotification)
    /// A transaction (`JWSTransaction`).
    case transaction(TransactionPayload)
    /// A renewal info (`JWSRenewalInfo`).
    case renewalInfo(RenewalInfoPayload)

    /// Which model a JWS's payload is read into.
    package enum Kind: Sendable {
        /// ``NotificationPayload``.
        case notification
        /// ``TransactionPayload``.
        case transaction
        /// ``RenewalInfoPayload``.
        case renewalInfo
    }

    /// The payload read into the `kind`'s model by ``PlainJSONReader`` alone, or nil when it has another shape.
    static func plain(_ kind: Kind, json: Data) -> DecodedPayload? {
        switch kind {
        case .notification:
            PlainNotification(json: json).map(DecodedPayload.notification)
        case .transaction:
            TransactionPayload.plain(json: json).map(DecodedPayload.transaction)
        case .renewalInfo:
            RenewalInfoPayload.plain(json: json).map(DecodedPayload.renewalInfo)
        }
    }

    /// The transaction, if this is one.
    package var transaction: TransactionPayload? {
        if case .transaction(let transaction) = self { return transaction }
        return nil
    }

    /// The renewal info, if this is one.
    package var renewalInfo: RenewalInfoPayload? {
        if case .renewalInfo(let renewalInfo) = self { return renewalInfo }
        return nil
    }
}
