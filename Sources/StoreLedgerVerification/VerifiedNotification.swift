package import Foundation
package import StoreLedgerCore

/// An App Store Server Notification V2 that passed verification, with its nested JWS verified too.
package struct VerifiedNotification: Hashable, Sendable {
    /// The `signedPayload` exactly as received.
    package let signedPayload: String
    /// The decoded outer payload: JSON bytes exactly as signed (nested JWS still as strings).
    package let payloadJSON: Data
    /// The envelope fields.
    package let claims: NotificationClaims
    /// `data.signedTransactionInfo`, verified.
    package let transaction: VerifiedSignedData?
    /// `data.signedRenewalInfo`, verified.
    package let renewalInfo: VerifiedSignedData?
    /// `appData.signedAppTransactionInfo`, verified.
    package let appTransaction: VerifiedSignedData?
    /// `true` when accepted as Xcode / LocalTesting data without any chain or signature check.
    package let isLocalTestData: Bool
    /// SHA-256 of the outer JWS's signing input (`header.payload` of `signedPayload`, as received): the digest its
    /// signature covers, computed once by the signature check. It names the signed header and payload bytes, so it
    /// serves as the notification's content digest without hashing the payload again.
    package let signingInputDigest: [UInt8]
    /// `payloadJSON` read into its model when verification read the claims from it (``DecodedPayload``, a
    /// notification); ``payloadStrippingNestedJWS()`` takes it, or decodes `payloadJSON` when this is nil.
    package let decoded: DecodedPayload?

    /// Creates a value; normally only a ``SignedDataVerifier`` does.
    package init(
        signedPayload: String,
        payloadJSON: Data,
        claims: NotificationClaims,
        transaction: VerifiedSignedData?,
        renewalInfo: VerifiedSignedData?,
        appTransaction: VerifiedSignedData?,
        isLocalTestData: Bool,
        signingInputDigest: [UInt8],
        decoded: DecodedPayload? = nil
    ) {
        self.signedPayload = signedPayload
        self.payloadJSON = payloadJSON
        self.claims = claims
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
        self.isLocalTestData = isLocalTestData
        self.signingInputDigest = signingInputDigest
        self.decoded = decoded
    }
}

extension VerifiedNotification {
    /// The notification's model and its text without the nested JWS members
    /// (``NotificationPayload/decodeStrippingNestedJWS(json:)``): from verification's own read of `payloadJSON` when it
    /// made one (``decoded``), decoded from `payloadJSON` otherwise.
    package func payloadStrippingNestedJWS() throws -> (payload: NotificationPayload, withoutNestedJWS: Data?) {
        if case .notification(let plain) = decoded { return (plain.payload, plain.withoutNestedJWS) }
        return try NotificationPayload.decodeStrippingNestedJWS(json: payloadJSON)
    }
}
