/// The subtype of an App Store Server Notification V2 (`subtype`), open to new values.
public struct NotificationSubtype: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// First purchase in a subscription group (SUBSCRIBED, OFFER_REDEEMED).
    public static let initialBuy = Self(rawValue: "INITIAL_BUY")

    /// Resubscription to the same or another product of a group after expiry.
    public static let resubscribe = Self(rawValue: "RESUBSCRIBE")

    /// A downgrade that takes effect at the next renewal.
    public static let downgrade = Self(rawValue: "DOWNGRADE")

    /// An upgrade that takes effect immediately.
    public static let upgrade = Self(rawValue: "UPGRADE")

    /// Auto-renew was turned on.
    public static let autoRenewEnabled = Self(rawValue: "AUTO_RENEW_ENABLED")

    /// Auto-renew was turned off.
    public static let autoRenewDisabled = Self(rawValue: "AUTO_RENEW_DISABLED")

    /// Expired because the user turned auto-renew off.
    public static let voluntary = Self(rawValue: "VOLUNTARY")

    /// Expired because the billing retry period ended without a successful charge.
    public static let billingRetry = Self(rawValue: "BILLING_RETRY")

    /// Expired because the user did not consent to a price increase.
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")

    /// A renewal failed and the billing grace period started.
    public static let gracePeriod = Self(rawValue: "GRACE_PERIOD")

    /// A renewal succeeded after a billing retry.
    public static let billingRecovery = Self(rawValue: "BILLING_RECOVERY")

    /// A price increase awaits the user's consent.
    public static let pending = Self(rawValue: "PENDING")

    /// The user consented to a price increase, or it needed no consent.
    public static let accepted = Self(rawValue: "ACCEPTED")

    /// Expired because the product was not for sale at renewal.
    public static let productNotForSale = Self(rawValue: "PRODUCT_NOT_FOR_SALE")

    /// A mass renewal-date extension completed.
    public static let summary = Self(rawValue: "SUMMARY")

    /// A renewal-date extension failed for one subscription.
    public static let failure = Self(rawValue: "FAILURE")

    /// An external purchase token was not reported.
    public static let unreported = Self(rawValue: "UNREPORTED")

    /// An external purchase token was created.
    public static let created = Self(rawValue: "CREATED")

    /// A reminder that an external purchase token is still active.
    public static let activeTokenReminder = Self(rawValue: "ACTIVE_TOKEN_REMINDER")
}
