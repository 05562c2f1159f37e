/// Why a user asked for a refund of a consumable (`consumptionRequestReason`), open to new values.
public struct ConsumptionRequestReason: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The user did not mean to buy.
    public static let unintendedPurchase = Self(rawValue: "UNINTENDED_PURCHASE")

    /// The content was not delivered or did not work.
    public static let fulfillmentIssue = Self(rawValue: "FULFILLMENT_ISSUE")

    /// The user was not satisfied.
    public static let unsatisfiedWithPurchase = Self(rawValue: "UNSATISFIED_WITH_PURCHASE")

    /// A legal reason.
    public static let legal = Self(rawValue: "LEGAL")

    /// Another reason.
    public static let other = Self(rawValue: "OTHER")
}
