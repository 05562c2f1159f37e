/// Why Apple refunded a transaction (`revocationReason`), open to new values.
public struct RevocationReason: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Another reason, such as an accidental purchase.
    public static let other = Self(rawValue: 0)

    /// An actual or perceived issue within the app.
    public static let appIssue = Self(rawValue: 1)
}
