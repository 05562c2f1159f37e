/// The identifier of the subscription group a subscription belongs to (`subscriptionGroupIdentifier`).
public struct SubscriptionGroupID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
