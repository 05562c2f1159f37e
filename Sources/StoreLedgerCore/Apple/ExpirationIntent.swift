/// Why a subscription expired (`expirationIntent`), open to new values.
public struct ExpirationIntent: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The user turned auto-renew off.
    public static let customerCancelled = Self(rawValue: 1)

    /// A billing error.
    public static let billingError = Self(rawValue: 2)

    /// The user did not consent to a price increase.
    public static let didNotConsentToPriceIncrease = Self(rawValue: 3)

    /// The product was not for sale at renewal.
    public static let productNotAvailable = Self(rawValue: 4)

    /// Another reason.
    public static let other = Self(rawValue: 5)
}
