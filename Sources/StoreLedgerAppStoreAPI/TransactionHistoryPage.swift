/// One page of Get Transaction History v2 (up to 20 signed transactions).
package struct TransactionHistoryPage: Sendable, Codable, Equatable {
    /// Pass back as `revision` for the next page.
    package var revision: String?
    /// Whether another page follows.
    package var hasMore: Bool
    /// The app's bundle id.
    package var bundleId: String?
    /// The app's Apple ID.
    package var appAppleId: Int64?
    /// The environment that answered.
    package var environment: String?
    /// The transactions, as JWS (verify before use).
    package var signedTransactions: [String]

    /// Creates a page.
    package init(revision: String?, hasMore: Bool, bundleId: String?, appAppleId: Int64?, environment: String?, signedTransactions: [String]) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
