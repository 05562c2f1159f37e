/// Get All Subscription Statuses: the latest transaction and renewal info of each subscription, by group.
package struct SubscriptionStatusesResponse: Sendable, Codable, Equatable {
    /// One subscription group.
    package struct Group: Sendable, Codable, Equatable {
        /// The group id.
        package var subscriptionGroupIdentifier: String?
        /// The latest state of each subscription in it.
        package var lastTransactions: [LastTransaction]

        /// Creates a group.
        package init(subscriptionGroupIdentifier: String?, lastTransactions: [LastTransaction]) {
            self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
            self.lastTransactions = lastTransactions
        }
    }

    /// A subscription's latest signed state.
    package struct LastTransaction: Sendable, Codable, Equatable {
        /// 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
        package var status: Int?
        /// The original transaction id.
        package var originalTransactionId: String?
        /// The latest transaction (JWS).
        package var signedTransactionInfo: String?
        /// The renewal info (JWS).
        package var signedRenewalInfo: String?

        /// Creates an entry.
        package init(status: Int?, originalTransactionId: String?, signedTransactionInfo: String?, signedRenewalInfo: String?) {
            self.status = status
            self.originalTransactionId = originalTransactionId
            self.signedTransactionInfo = signedTransactionInfo
            self.signedRenewalInfo = signedRenewalInfo
        }
    }

    /// The environment that answered.
    package var environment: String?
    /// The app's bundle id.
    package var bundleId: String?
    /// The app's Apple ID.
    package var appAppleId: Int64?
    /// The groups.
    package var data: [Group]

    /// Creates a response.
    package init(environment: String?, bundleId: String?, appAppleId: Int64?, data: [Group]) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
