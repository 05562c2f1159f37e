/// The key of one one-time purchase row: an environment and a transaction id.
public struct PurchaseKey: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The environment the purchase lives in.
    public var environment: AppStoreEnvironment
    /// The purchase's transaction id.
    public var transactionID: TransactionID

    /// Makes a key.
    public init(environment: AppStoreEnvironment, transactionID: TransactionID) {
        self.environment = environment
        self.transactionID = transactionID
    }

    /// Orders keys by environment, then transaction id.
    public static func < (lhs: PurchaseKey, rhs: PurchaseKey) -> Bool {
        (lhs.environment.rawValue, lhs.transactionID.rawValue) < (rhs.environment.rawValue, rhs.transactionID.rawValue)
    }

    /// "environment/transactionID".
    public var description: String { "\(environment.rawValue)/\(transactionID.rawValue)" }
}
