/// Why a transaction exists (`transactionReason`), open to new values.
public struct TransactionReason: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The user bought the product (or upgraded, or redeemed an offer).
    public static let purchase = Self(rawValue: "PURCHASE")

    /// The App Store renewed a subscription.
    public static let renewal = Self(rawValue: "RENEWAL")
}
