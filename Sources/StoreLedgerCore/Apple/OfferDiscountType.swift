/// The payment mode of an offer (`offerDiscountType`), open to new values.
public struct OfferDiscountType: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A free trial.
    public static let freeTrial = Self(rawValue: "FREE_TRIAL")

    /// A discounted price for each of several periods.
    public static let payAsYouGo = Self(rawValue: "PAY_AS_YOU_GO")

    /// A discounted price paid once for several periods.
    public static let payUpFront = Self(rawValue: "PAY_UP_FRONT")

    /// A one-time offer.
    public static let oneTime = Self(rawValue: "ONE_TIME")
}
