package import Foundation
package import StoreLedgerCore

/// A purchase the host app is about to start (seed 003): its correlation id is the appAccountToken the app hands
/// StoreKit, so the verified transaction that carries it completes the intent.
package struct PurchaseIntent: Sendable, Equatable {
    /// Where the intent stands.
    package enum Status: String, Sendable, Equatable {
        /// No verified transaction carries the token yet, and it has not expired.
        case pending
        /// A verified transaction carries the token.
        case completed
        /// It expired before any verified transaction carried the token.
        case expired
    }

    /// The correlation id (lower-case UUID) = the appAccountToken.
    package var correlationID: UUID
    /// The user it was created for.
    package var userID: UserID
    /// The product the user is buying.
    package var productID: ProductID
    /// When it was created.
    package var createdAt: Date
    /// When it stops waiting.
    package var expiresAt: Date
    /// The completing transaction, when completed.
    package var completion: Completion?

    /// The environment a host declares at creation (seed 003's vocabulary: the app's detected `sandbox` or
    /// `production`, or `xcode` for Xcode StoreKit testing).
    package enum Environment: String, Sendable, Equatable, CaseIterable {
        /// A development, TestFlight or App Review build.
        case sandbox
        /// An App Store build.
        case production
        /// Xcode StoreKit testing (a StoreKit configuration file).
        case xcode

        /// The environment `text` names, in any case (`sandbox`, `Sandbox`, `SANDBOX`), or nil.
        package init?(named text: String) {
            self.init(rawValue: text.lowercased())
        }
    }

    /// The environment the host declared at creation, if any.
    package var environment: Environment?

    /// The environment as answered: the one declared at creation, else the completing transaction's, both in seed
    /// 003's lower-case words (Apple's `LocalTesting` is `localtesting`); nil while neither is known.
    package var answeredEnvironment: String? {
        environment?.rawValue ?? completion.map { $0.environment.lowercased() }
    }

    /// The verified transaction that completed an intent.
    package struct Completion: Sendable, Equatable {
        /// Its transaction id.
        package var transactionID: String
        /// Its original transaction id.
        package var originalTransactionID: String
        /// The product actually bought (may differ from the intent's).
        package var productID: String?
        /// `Production`, `Sandbox` or `Xcode`.
        package var environment: String
        /// When the fact was recorded.
        package var completedAt: Date
    }

    /// Creates an intent.
    package init(
        correlationID: UUID, userID: UserID, productID: ProductID, environment: Environment? = nil, createdAt: Date, expiresAt: Date,
        completion: Completion?
    ) {
        self.correlationID = correlationID
        self.userID = userID
        self.productID = productID
        self.environment = environment
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.completion = completion
    }

    /// The status at `date`.
    package func status(at date: Date) -> Status {
        if completion != nil { return .completed }
        return expiresAt <= date ? .expired : .pending
    }
}
