/// Whether the user bought a product or has it through Family Sharing (`inAppOwnershipType`).
public struct OwnershipType: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The user bought the product.
    public static let purchased = Self(rawValue: "PURCHASED")

    /// A family member shares the product with the user.
    public static let familyShared = Self(rawValue: "FAMILY_SHARED")
}
