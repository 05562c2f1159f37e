/// The type of an App Store Server Notification V2 (`notificationType`), open to new values.
public struct NotificationType: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A user subscribed (subtype INITIAL_BUY or RESUBSCRIBE).
    public static let subscribed = Self(rawValue: "SUBSCRIBED")

    /// A subscription renewed (subtype BILLING_RECOVERY after a billing retry).
    public static let didRenew = Self(rawValue: "DID_RENEW")

    /// The user turned auto-renew on or off.
    public static let didChangeRenewalStatus = Self(rawValue: "DID_CHANGE_RENEWAL_STATUS")

    /// The user changed the product that renews: UPGRADE (now), DOWNGRADE (at renewal) or none (downgrade cancelled).
    public static let didChangeRenewalPref = Self(rawValue: "DID_CHANGE_RENEWAL_PREF")

    /// The user redeemed a promotional offer or offer code.
    public static let offerRedeemed = Self(rawValue: "OFFER_REDEEMED")

    /// A renewal failed on billing; subtype GRACE_PERIOD keeps service, none starts billing retry.
    public static let didFailToRenew = Self(rawValue: "DID_FAIL_TO_RENEW")

    /// The billing grace period ended without a renewal; billing retry may continue.
    public static let gracePeriodExpired = Self(rawValue: "GRACE_PERIOD_EXPIRED")

    /// A subscription expired (subtypes VOLUNTARY, BILLING_RETRY, PRICE_INCREASE, PRODUCT_NOT_FOR_SALE).
    public static let expired = Self(rawValue: "EXPIRED")

    /// A price increase needs consent (PENDING) or was consented to (ACCEPTED).
    public static let priceIncrease = Self(rawValue: "PRICE_INCREASE")

    /// Apple refunded a transaction; its access is revoked.
    public static let refund = Self(rawValue: "REFUND")

    /// Family Sharing access to a purchase was revoked.
    public static let revoke = Self(rawValue: "REVOKE")

    /// Apple reversed a refund it had granted; access is restored.
    public static let refundReversed = Self(rawValue: "REFUND_REVERSED")

    /// Apple declined a refund request.
    public static let refundDeclined = Self(rawValue: "REFUND_DECLINED")

    /// Apple asks for consumption data to decide a refund request.
    public static let consumptionRequest = Self(rawValue: "CONSUMPTION_REQUEST")

    /// The renewal date of one subscription was extended.
    public static let renewalExtended = Self(rawValue: "RENEWAL_EXTENDED")

    /// A mass renewal-date extension finished (SUMMARY) or failed for one subscription (FAILURE).
    public static let renewalExtension = Self(rawValue: "RENEWAL_EXTENSION")

    /// A consumable, non-consumable or non-renewing subscription was bought.
    public static let oneTimeCharge = Self(rawValue: "ONE_TIME_CHARGE")

    /// A test notification requested through the App Store Server API.
    public static let test = Self(rawValue: "TEST")

    /// An external purchase token was not reported (UNREPORTED) or created.
    public static let externalPurchaseToken = Self(rawValue: "EXTERNAL_PURCHASE_TOKEN")

    /// A user withdrew consent for data sharing (carries appData).
    public static let rescindConsent = Self(rawValue: "RESCIND_CONSENT")

    /// Advanced Commerce metadata changed.
    public static let metadataUpdate = Self(rawValue: "METADATA_UPDATE")

    /// A subscription migrated to Advanced Commerce.
    public static let migration = Self(rawValue: "MIGRATION")

    /// An Advanced Commerce price changed.
    public static let priceChange = Self(rawValue: "PRICE_CHANGE")
}
