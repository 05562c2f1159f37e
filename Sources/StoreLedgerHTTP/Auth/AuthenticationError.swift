/// The authentication configuration is unusable (e.g. a public key that does not parse).
public struct AuthenticationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong.
    public let description: String

    /// Creates the error.
    public init(_ description: String) {
        self.description = description
    }
}
