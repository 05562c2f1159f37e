/// The identifier of a promotional offer, offer code or win-back offer (`offerIdentifier`).
public struct OfferID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
