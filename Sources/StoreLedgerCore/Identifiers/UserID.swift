/// The id of one of the host app's users: the `sub` claim of its bearer token, never a value from a request body.
public struct UserID: StringIdentifier {
    /// The identifier exactly as the token carried it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
