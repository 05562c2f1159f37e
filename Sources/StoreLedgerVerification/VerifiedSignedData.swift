package import Foundation
package import StoreLedgerCore

/// A JWS that passed verification: the token as received and its payload, ready for the payload models.
package struct VerifiedSignedData: Hashable, Sendable {
    /// The compact JWS exactly as received (store it: it can be verified again later).
    package let signedData: String
    /// The decoded payload: JSON bytes exactly as signed.
    package let payloadJSON: Data
    /// The payload's environment (for app transactions, its `receiptType`).
    package let environment: AppStoreEnvironment?
    /// When Apple signed the payload (milliseconds, possibly fractional, as a `Date`): its `signedDate`, or an app
    /// transaction's `receiptCreationDate`.
    package let signedDate: Date?
    /// `true` when accepted as Xcode / LocalTesting data without any chain or signature check.
    package let isLocalTestData: Bool
    /// `payloadJSON` read into its model when verification read the claims from it (``DecodedPayload``);
    /// ``transactionPayload()`` and ``renewalInfoPayload()`` take it, or decode `payloadJSON` when this is nil.
    package let decoded: DecodedPayload?

    /// Creates a value; normally only a ``SignedDataVerifier`` does.
    package init(
        signedData: String,
        payloadJSON: Data,
        environment: AppStoreEnvironment?,
        signedDate: Date?,
        isLocalTestData: Bool,
        decoded: DecodedPayload? = nil
    ) {
        self.signedData = signedData
        self.payloadJSON = payloadJSON
        self.environment = environment
        self.signedDate = signedDate
        self.isLocalTestData = isLocalTestData
        self.decoded = decoded
    }
}

extension VerifiedSignedData {
    /// The payload as a transaction: verification's own read of `payloadJSON` when it made one (``decoded``), decoded
    /// from `payloadJSON` otherwise (``TransactionPayload/decode(json:)``).
    package func transactionPayload() throws -> TransactionPayload {
        if let transaction = decoded?.transaction { return transaction }
        return try TransactionPayload.decode(json: payloadJSON)
    }

    /// The payload as a renewal info: verification's own read of `payloadJSON` when it made one (``decoded``), decoded
    /// from `payloadJSON` otherwise (``RenewalInfoPayload/decode(json:)``).
    package func renewalInfoPayload() throws -> RenewalInfoPayload {
        if let renewalInfo = decoded?.renewalInfo { return renewalInfo }
        return try RenewalInfoPayload.decode(json: payloadJSON)
    }
}
