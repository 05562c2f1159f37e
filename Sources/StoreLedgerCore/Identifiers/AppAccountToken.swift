/// The UUID an app associated with a purchase (`appAccountToken`); Apple's empty string means none and is never wrapped.
public struct AppAccountToken: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
