/// The status of an auto-renewable subscription in the read model (`subscriptions.status`).
public enum SubscriptionStatus: String, Hashable, Sendable, Codable, CaseIterable {
    /// In a paid or free period: entitles.
    case active
    /// A renewal failed and Apple's billing grace period runs: entitles until the grace period ends.
    case gracePeriod = "grace_period"
    /// A renewal failed and Apple keeps trying to charge: does not entitle.
    case billingRetry = "billing_retry"
    /// Ended: does not entitle.
    case expired
    /// Refunded or revoked through Family Sharing: does not entitle.
    case revoked

    /// Whether the status entitles the user, per Apple's status semantics (active and grace period do).
    public var entitles: Bool {
        switch self {
        case .active, .gracePeriod: true
        case .billingRetry, .expired, .revoked: false
        }
    }

    /// The status for Apple's status code, or `nil` for a code this version does not know.
    public init?(code: SubscriptionStatusCode) {
        switch code {
        case .active: self = .active
        case .expired: self = .expired
        case .billingRetry: self = .billingRetry
        case .gracePeriod: self = .gracePeriod
        case .revoked: self = .revoked
        default: return nil
        }
    }
}
