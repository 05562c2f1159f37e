/// What changed between two states of a row, for outgoing webhooks: whether entitlement changed, and a
/// classification of the change.
public struct EntitlementChange: Hashable, Sendable, Codable {
    /// The classification of a change; its raw value is the stable name webhooks carry.
    public struct Kind: OpenStringValue {
        /// The stable name.
        public let rawValue: String

        /// Wraps any name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// A first purchase: the row is new and entitles.
        public static let started = Self(rawValue: "started")
        /// A resubscription after expiry.
        public static let resubscribed = Self(rawValue: "resubscribed")
        /// A new period of the same subscription.
        public static let renewed = Self(rawValue: "renewed")
        /// The current period was extended (same transaction, later expiry).
        public static let extended = Self(rawValue: "extended")
        /// The subscription expired.
        public static let expired = Self(rawValue: "expired")
        /// The purchase was refunded.
        public static let refunded = Self(rawValue: "refunded")
        /// Family Sharing access was revoked.
        public static let revoked = Self(rawValue: "revoked")
        /// A refund was reversed: access is back.
        public static let refundReversed = Self(rawValue: "refund_reversed")
        /// A renewal failed: grace period (still entitled) or billing retry (not entitled).
        public static let billingIssue = Self(rawValue: "billing_issue")
        /// A renewal succeeded after a billing issue.
        public static let billingRecovered = Self(rawValue: "billing_recovered")
        /// The product of the current period changed (an upgrade, or a downgrade taking effect).
        public static let productChanged = Self(rawValue: "product_changed")
        /// The product that renews next changed (a downgrade scheduled or cancelled).
        public static let renewalProductChanged = Self(rawValue: "renewal_product_changed")
        /// Auto-renew was turned off.
        public static let autoRenewDisabled = Self(rawValue: "auto_renew_disabled")
        /// Auto-renew was turned on.
        public static let autoRenewEnabled = Self(rawValue: "auto_renew_enabled")
        /// A one-time product was bought.
        public static let purchased = Self(rawValue: "purchased")
    }

    /// The classification.
    public var kind: Kind
    /// Whether the old state entitled (false when there was none).
    public var wasEntitled: Bool
    /// Whether the new state entitles.
    public var isEntitled: Bool

    /// Makes a change.
    public init(kind: Kind, wasEntitled: Bool, isEntitled: Bool) {
        self.kind = kind
        self.wasEntitled = wasEntitled
        self.isEntitled = isEntitled
    }

    /// Whether entitlement flipped.
    public var entitlementChanged: Bool { wasEntitled != isEntitled }

    /// The change between two states of one subscription, or `nil` when nothing a subscriber cares about
    /// changed. When several things changed at once, the most significant is reported.
    public static func between(_ old: SubscriptionState?, _ new: SubscriptionState?) -> EntitlementChange? {
        guard let new else { return nil }
        let was = old?.entitled ?? false
        let now = new.entitled
        /// A change of the given kind between the two states.
        func change(_ kind: Kind) -> EntitlementChange { EntitlementChange(kind: kind, wasEntitled: was, isEntitled: now) }
        guard let old else { return change(now ? .started : statusKind(new) ?? .expired) }

        if old.status != new.status {
            switch (old.status, new.status) {
            case (.revoked, .active), (.revoked, .gracePeriod):
                return change(old.latestTransactionID == new.latestTransactionID ? .refundReversed : .resubscribed)
            case (.expired, .active), (.expired, .gracePeriod):
                return change(.resubscribed)
            case (.billingRetry, .active), (.gracePeriod, .active):
                return change(.billingRecovered)
            default:
                if let kind = statusKind(new) { return change(kind) }
            }
        }
        if old.productID != new.productID { return change(.productChanged) }
        if old.latestTransactionID != new.latestTransactionID, new.entitled { return change(.renewed) }
        // At the stored precision: the old row was read back in whole milliseconds, the new one may carry Xcode's fractions.
        if let oldExpiry = old.expiresAt, let newExpiry = new.expiresAt, newExpiry.storedMilliseconds > oldExpiry.storedMilliseconds {
            return change(.extended)
        }
        // The renewal preferences. A row built from a transaction alone (the app posted it before Apple's notification,
        // a restore) knows none: the first renewal info tells them, and is a change only where it says something a
        // subscriber must act on (auto-renew off: the customer cancelled; a renewal product other than the current one).
        // A cancellation outranks a renewal product changed in the same fact.
        if new.autoRenew == false, old.autoRenew != false { return change(.autoRenewDisabled) }
        if let renewalProduct = new.autoRenewProductID, renewalProduct != old.autoRenewProductID,
            old.autoRenewProductID != nil || renewalProduct != new.productID
        {
            return change(.renewalProductChanged)
        }
        if new.autoRenew == true, old.autoRenew == false { return change(.autoRenewEnabled) }
        return nil
    }

    /// The change between two states of one one-time purchase, or `nil` when nothing changed that matters.
    public static func between(_ old: PurchaseState?, _ new: PurchaseState?) -> EntitlementChange? {
        guard let new else { return nil }
        let was = old?.entitled ?? false
        let now = new.entitled
        /// A change of the given kind between the two states.
        func change(_ kind: Kind) -> EntitlementChange { EntitlementChange(kind: kind, wasEntitled: was, isEntitled: now) }
        guard old != nil else { return change(now ? .purchased : revocationKind(new.revocationType, ownership: new.ownership)) }
        if was && !now { return change(revocationKind(new.revocationType, ownership: new.ownership)) }
        if !was && now { return change(.refundReversed) }
        return nil
    }

    /// The kind a subscription's new status alone suggests.
    private static func statusKind(_ state: SubscriptionState) -> Kind? {
        switch state.status {
        case .expired: .expired
        case .revoked: revocationKind(state.revocationType, ownership: state.ownership)
        case .billingRetry, .gracePeriod: .billingIssue
        case .active: nil
        }
    }

    /// Refunded, or revoked through Family Sharing: `FAMILY_REVOKE`, or a family member's copy revoked without a
    /// `revocationType` (Apple sent none before 2025; the refund is the purchaser's). One rule for subscriptions and
    /// one-time purchases, as the analytics' refunds have (migration 0026).
    private static func revocationKind(_ type: RevocationType?, ownership: OwnershipType?) -> Kind {
        type == .familyRevoke || ownership == .familyShared && type == nil ? .revoked : .refunded
    }
}
