public import Foundation

/// An App Store Server Notification V2 that passed verification, with its nested JWS verified too.
public struct VerifiedNotification: Hashable, Sendable {
    /// The `signedPayload` exactly as received.
    public let signedPayload: String
    /// The decoded outer payload: JSON bytes exactly as signed (nested JWS still as strings).
    public let payloadJSON: Data
    /// The envelope fields.
    public let claims: NotificationClaims
    /// `data.signedTransactionInfo`, verified.
    public let transaction: VerifiedSignedData?
    /// `data.signedRenewalInfo`, verified.
    public let renewalInfo: VerifiedSignedData?
    /// `appData.signedAppTransactionInfo`, verified.
    public let appTransaction: VerifiedSignedData?
    /// `true` when accepted as Xcode / LocalTesting data without any chain or signature check.
    public let isLocalTestData: Bool

    /// Creates a value; normally only a ``SignedDataVerifier`` does.
    public init(
        signedPayload: String,
        payloadJSON: Data,
        claims: NotificationClaims,
        transaction: VerifiedSignedData?,
        renewalInfo: VerifiedSignedData?,
        appTransaction: VerifiedSignedData?,
        isLocalTestData: Bool
    ) {
        self.signedPayload = signedPayload
        self.payloadJSON = payloadJSON
        self.claims = claims
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
        self.isLocalTestData = isLocalTestData
    }
}
