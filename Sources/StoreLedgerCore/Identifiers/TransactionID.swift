/// The id of one purchase or renewal transaction (`transactionId`), a numeric string kept as a string.
public struct TransactionID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
