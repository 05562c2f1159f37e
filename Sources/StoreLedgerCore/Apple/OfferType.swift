/// The kind of offer applied to a transaction or the next renewal (`offerType`), open to new values.
public struct OfferType: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// An introductory offer.
    public static let introductory = Self(rawValue: 1)

    /// A promotional offer.
    public static let promotional = Self(rawValue: 2)

    /// An offer code.
    public static let offerCode = Self(rawValue: 3)

    /// A win-back offer.
    public static let winBack = Self(rawValue: 4)
}
