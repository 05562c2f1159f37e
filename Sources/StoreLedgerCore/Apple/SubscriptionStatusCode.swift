/// Apple's status of an auto-renewable subscription (`status` on notification data and status responses).
public struct SubscriptionStatusCode: OpenIntegerValue {
    /// The raw value Apple sent.
    public let rawValue: Int32

    /// Wraps any raw value, known or not.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// Active: entitles.
    public static let active = Self(rawValue: 1)

    /// Expired: does not entitle.
    public static let expired = Self(rawValue: 2)

    /// In billing retry: does not entitle.
    public static let billingRetry = Self(rawValue: 3)

    /// In the billing grace period: entitles.
    public static let gracePeriod = Self(rawValue: 4)

    /// Revoked (refunded or family revoked): does not entitle.
    public static let revoked = Self(rawValue: 5)
}
