/// Whether the user consented to a price increase (`priceIncreaseStatus`), open to new values.
public struct PriceIncreaseStatus: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The user has not responded to a price increase that needs consent.
    public static let noResponse = Self(rawValue: 0)

    /// The user consented, or the increase needed no consent.
    public static let consented = Self(rawValue: 1)
}
