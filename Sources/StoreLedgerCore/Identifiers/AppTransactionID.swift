/// The id of the app download transaction that a purchase belongs to (`appTransactionId`).
public struct AppTransactionID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
