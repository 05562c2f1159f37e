public import Foundation
public import StoreLedgerCore

/// A JWS that passed verification: the token as received and its payload, ready for the payload models.
public struct VerifiedSignedData: Hashable, Sendable {
    /// The compact JWS exactly as received (store it: it can be verified again later).
    public let signedData: String
    /// The decoded payload: JSON bytes exactly as signed.
    public let payloadJSON: Data
    /// The payload's environment (for app transactions, its `receiptType`).
    public let environment: AppStoreEnvironment?
    /// The payload's `signedDate` (milliseconds, possibly fractional, as a `Date`).
    public let signedDate: Date?
    /// `true` when accepted as Xcode / LocalTesting data without any chain or signature check.
    public let isLocalTestData: Bool

    /// Creates a value; normally only a ``SignedDataVerifier`` does.
    public init(
        signedData: String,
        payloadJSON: Data,
        environment: AppStoreEnvironment?,
        signedDate: Date?,
        isLocalTestData: Bool
    ) {
        self.signedData = signedData
        self.payloadJSON = payloadJSON
        self.environment = environment
        self.signedDate = signedDate
        self.isLocalTestData = isLocalTestData
    }
}
