/// The key of one subscription row: an environment and an original transaction id.
public struct SubscriptionKey: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The environment the subscription lives in.
    public var environment: AppStoreEnvironment
    /// The subscription's original transaction id.
    public var originalTransactionID: OriginalTransactionID

    /// Makes a key.
    public init(environment: AppStoreEnvironment, originalTransactionID: OriginalTransactionID) {
        self.environment = environment
        self.originalTransactionID = originalTransactionID
    }

    /// Orders keys by environment, then original transaction id.
    public static func < (lhs: SubscriptionKey, rhs: SubscriptionKey) -> Bool {
        (lhs.environment.rawValue, lhs.originalTransactionID.rawValue)
            < (rhs.environment.rawValue, rhs.originalTransactionID.rawValue)
    }

    /// "environment/originalTransactionID".
    public var description: String { "\(environment.rawValue)/\(originalTransactionID.rawValue)" }
}
