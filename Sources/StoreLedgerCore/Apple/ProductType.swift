/// The kind of in-app product a transaction bought (`type`), open to new values.
public struct ProductType: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// An auto-renewable subscription.
    public static let autoRenewable = Self(rawValue: "Auto-Renewable Subscription")

    /// A non-consumable product, bought once.
    public static let nonConsumable = Self(rawValue: "Non-Consumable")

    /// A consumable product.
    public static let consumable = Self(rawValue: "Consumable")

    /// A non-renewing subscription.
    public static let nonRenewing = Self(rawValue: "Non-Renewing Subscription")
}
