/// Whether a subscription renews at the end of its period (`autoRenewStatus`), open to new values.
public struct AutoRenewStatus: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Auto-renew is off.
    public static let off = Self(rawValue: 0)

    /// Auto-renew is on.
    public static let on = Self(rawValue: 1)
}
