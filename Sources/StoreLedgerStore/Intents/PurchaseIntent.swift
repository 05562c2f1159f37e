public import Foundation
public import StoreLedgerCore

/// A purchase the host app is about to start (seed 003): its correlation id is the appAccountToken the app hands
/// StoreKit, so the verified transaction that carries it completes the intent.
public struct PurchaseIntent: Sendable, Equatable {
    /// Where the intent stands.
    public enum Status: String, Sendable, Equatable {
        /// No verified transaction carries the token yet, and it has not expired.
        case pending
        /// A verified transaction carries the token.
        case completed
        /// It expired before any verified transaction carried the token.
        case expired
    }

    /// The correlation id (lower-case UUID) = the appAccountToken.
    public var correlationID: UUID
    /// The user it was created for.
    public var userID: UserID
    /// The product the user is buying.
    public var productID: ProductID
    /// When it was created.
    public var createdAt: Date
    /// When it stops waiting.
    public var expiresAt: Date
    /// The completing transaction, when completed.
    public var completion: Completion?

    /// The verified transaction that completed an intent.
    public struct Completion: Sendable, Equatable {
        /// Its transaction id.
        public var transactionID: String
        /// Its original transaction id.
        public var originalTransactionID: String
        /// The product actually bought (may differ from the intent's).
        public var productID: String?
        /// `Production`, `Sandbox` or `Xcode`.
        public var environment: String
        /// When the fact was recorded.
        public var completedAt: Date
    }

    /// Creates an intent.
    public init(correlationID: UUID, userID: UserID, productID: ProductID, createdAt: Date, expiresAt: Date, completion: Completion?) {
        self.correlationID = correlationID
        self.userID = userID
        self.productID = productID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.completion = completion
    }

    /// The status at `date`.
    public func status(at date: Date) -> Status {
        if completion != nil { return .completed }
        return expiresAt <= date ? .expired : .pending
    }
}
