/// One page of Get Transaction History v2 (up to 20 signed transactions).
public struct TransactionHistoryPage: Sendable, Codable, Equatable {
    /// Pass back as `revision` for the next page.
    public var revision: String?
    /// Whether another page follows.
    public var hasMore: Bool
    /// The app's bundle id.
    public var bundleId: String?
    /// The app's Apple ID.
    public var appAppleId: Int64?
    /// The environment that answered.
    public var environment: String?
    /// The transactions, as JWS (verify before use).
    public var signedTransactions: [String]

    /// Creates a page.
    public init(revision: String?, hasMore: Bool, bundleId: String?, appAppleId: Int64?, environment: String?, signedTransactions: [String]) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
