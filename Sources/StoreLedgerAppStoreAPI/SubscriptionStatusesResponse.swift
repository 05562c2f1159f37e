/// Get All Subscription Statuses: the latest transaction and renewal info of each subscription, by group.
public struct SubscriptionStatusesResponse: Sendable, Codable, Equatable {
    /// One subscription group.
    public struct Group: Sendable, Codable, Equatable {
        /// The group id.
        public var subscriptionGroupIdentifier: String?
        /// The latest state of each subscription in it.
        public var lastTransactions: [LastTransaction]

        /// Creates a group.
        public init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransaction]) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.lastTransactions = lastTransactions
        }
    }

    /// A subscription's latest signed state.
    public struct LastTransaction: Sendable, Codable, Equatable {
        /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
        public var status: Int?
        /// The original transaction id.
        public var originalTransactionId: String?
        /// The latest transaction (JWS).
        public var signedTransactionInfo: String?
        /// The renewal info (JWS).
        public var signedRenewalInfo: String?

        /// Creates an entry.
        public init(status: Int?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?) {
            self.status = status
            self.originalTransactionId = originalTransactionId
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// The environment that answered.
    public var environment: String?
    /// The app's bundle id.
    public var bundleId: String?
    /// The app's Apple ID.
    public var appAppleId: Int64?
    /// The groups.
    public var data: [Group]

    /// Creates a response.
    public init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [Group]) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
