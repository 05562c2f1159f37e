/// The id of one subscription purchase event across devices (`webOrderLineItemId`).
public struct WebOrderLineItemID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
