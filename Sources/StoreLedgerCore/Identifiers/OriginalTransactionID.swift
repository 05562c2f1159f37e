/// The id of the first purchase of a product by a user; groups every renewal of one subscription (`originalTransactionId`).
public struct OriginalTransactionID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
