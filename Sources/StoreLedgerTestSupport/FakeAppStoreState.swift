public import Foundation
public import StoreLedgerAppStoreAPI

/// What the fake App Store Server API knows and how it misbehaves; scripted by tests.
public actor FakeAppStoreState {
    /// An answer to force on the next request(s).
    public struct Fault: Sendable {
        /// The HTTP status.
        public var status: Int
        /// Apple's `errorCode`.
        public var appleErrorCode: Int?
        /// A `Retry-After` header, in seconds.
        public var retryAfterSeconds: Int?

        /// Creates a fault.
        public init(status: Int, appleErrorCode: Int?, retryAfterSeconds: Int? = nil) {
            self.status = status
            self.appleErrorCode = appleErrorCode
            self.retryAfterSeconds = retryAfterSeconds
        }

        /// 429 with errorCode 4290000.
        public static func rateLimited(retryAfterSeconds: Int? = nil) -> Fault {
            Fault(status: 429, appleErrorCode: 4_290_000, retryAfterSeconds: retryAfterSeconds)
        }
        /// 500 with errorCode 5000001 (retryable).
        public static let retryable = Fault(status: 500, appleErrorCode: 5_000_001)
    }

    /// One request as the fake saw it.
    public struct LoggedRequest: Sendable, Equatable {
        /// GET or POST.
        public var method: String
        /// The path after the environment prefix.
        public var path: String
        /// Which environment's host it addressed.
        public var environment: AppStoreAPIHost
        /// Whether its token was accepted.
        public var authorized: Bool
    }

    /// Signed transactions by environment and transaction id (Get Transaction Info).
    var transactions: [AppStoreAPIHost: [String: String]] = [:]
    /// Signed transactions of a customer's history by environment and any of its transaction ids.
    var histories: [AppStoreAPIHost: [String: [String]]] = [:]
    /// Get All Subscription Statuses answers by environment and transaction id.
    var statuses: [AppStoreAPIHost: [String: SubscriptionStatusesResponse]] = [:]
    /// Notification history by environment.
    var notifications: [AppStoreAPIHost: [NotificationHistoryItem]] = [:]
    /// Faults to answer the next requests with, in order.
    var faults: [Fault] = []
    /// Whether production answers 401 to everything (the app is not yet released there).
    public var productionUnreleased = false
    /// Every request, in order.
    public private(set) var requests: [LoggedRequest] = []
    /// The tokens the fake received: header and claims JSON, in order.
    public private(set) var receivedTokens: [(header: Data, claims: Data)] = []
    /// Test notifications requested.
    public private(set) var testNotificationsRequested = 0

    /// Creates empty state.
    public init() {}

    /// Makes `jws` the answer to Get Transaction Info for `transactionID` in `environment`.
    public func addTransaction(_ jws: String, id transactionID: String, environment: AppStoreAPIHost) {
        transactions[environment, default: [:]][transactionID] = jws
    }

    /// Makes `transactions` the history answered for `transactionID`.
    public func setHistory(_ transactions: [String], for transactionID: String, environment: AppStoreAPIHost) {
        histories[environment, default: [:]][transactionID] = transactions
    }

    /// Makes `response` the statuses answered for `transactionID`.
    public func setStatuses(_ response: SubscriptionStatusesResponse, for transactionID: String, environment: AppStoreAPIHost) {
        statuses[environment, default: [:]][transactionID] = response
    }

    /// Sets the notification history of `environment`.
    public func setNotificationHistory(_ items: [NotificationHistoryItem], environment: AppStoreAPIHost) {
        notifications[environment] = items
    }

    /// Answers the next requests with `faults`, one each, in order.
    public func inject(_ faults: [Fault]) {
        self.faults += faults
    }

    /// Sets whether production answers 401.
    public func setProductionUnreleased(_ value: Bool) {
        productionUnreleased = value
    }

    func log(_ request: LoggedRequest) { requests.append(request) }
    func logToken(header: Data, claims: Data) { receivedTokens.append((header, claims)) }
    func nextFault() -> Fault? { faults.isEmpty ? nil : faults.removeFirst() }
    func countTestNotification() { testNotificationsRequested += 1 }
}
