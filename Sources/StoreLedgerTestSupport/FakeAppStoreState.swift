package import Foundation
package import StoreLedgerAppStoreAPI

/// What the fake App Store Server API knows and how it misbehaves; scripted by tests.
package actor FakeAppStoreState {
    /// An answer to force on the next request(s).
    package struct Fault: Sendable {
        /// The HTTP status.
        package var status: Int
        /// Apple's `errorCode`.
        package var appleErrorCode: Int?
        /// A `Retry-After` this many seconds from the answer, sent as Apple sends it: the UNIX time in milliseconds.
        package var retryAfterSeconds: Int?

        /// Creates a fault.
        package init(status: Int, appleErrorCode: Int?, retryAfterSeconds: Int? = nil) {
            self.status = status
            self.appleErrorCode = appleErrorCode
            self.retryAfterSeconds = retryAfterSeconds
        }

        /// 429 with errorCode 4290000.
        package static func rateLimited(retryAfterSeconds: Int? = nil) -> Fault {
            Fault(status: 429, appleErrorCode: 4_290_000, retryAfterSeconds: retryAfterSeconds)
        }
        /// 404 with errorCode 4040002, 4040004 or 4040006: Apple's "not found, try again".
        package static func notFoundYet(_ appleErrorCode: Int = 4_040_006) -> Fault { Fault(status: 404, appleErrorCode: appleErrorCode) }
        /// 500 with errorCode 5000001 (retryable).
        package static let retryable = Fault(status: 500, appleErrorCode: 5_000_001)
        /// No fault: the request is answered as usual (to fail a later request and not this one).
        package static let pass = Fault(status: 0, appleErrorCode: nil)
    }

    /// One request as the fake saw it.
    package struct LoggedRequest: Sendable, Equatable {
        /// GET or POST.
        package var method: String
        /// The path after the environment prefix.
        package var path: String
        /// Which environment's host it addressed.
        package var environment: AppStoreAPIHost
        /// Whether its token was accepted.
        package var authorized: Bool
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
    package var productionUnreleased = false
    /// Every request, in order.
    package private(set) var requests: [LoggedRequest] = []
    /// The Get Transaction Info requests, in order.
    package var transactionInfoRequests: [LoggedRequest] { requests.filter { $0.path.hasPrefix("/inApps/v1/transactions/") } }
    /// The tokens the fake received: header and claims JSON, in order.
    package private(set) var receivedTokens: [(header: Data, claims: Data)] = []
    /// Test notifications requested.
    package private(set) var testNotificationsRequested = 0

    /// Creates empty state.
    package init() {}

    /// Makes `jws` the answer to Get Transaction Info for `transactionID` in `environment`.
    package func addTransaction(_ jws: String, id transactionID: String, environment: AppStoreAPIHost) {
        transactions[environment, default: [:]][transactionID] = jws
    }

    /// Makes `transactions` the history answered for `transactionID`.
    package func setHistory(_ transactions: [String], for transactionID: String, environment: AppStoreAPIHost) {
        histories[environment, default: [:]][transactionID] = transactions
    }

    /// Makes `response` the statuses answered for `transactionID`.
    package func setStatuses(_ response: SubscriptionStatusesResponse, for transactionID: String, environment: AppStoreAPIHost) {
        statuses[environment, default: [:]][transactionID] = response
    }

    /// Sets the notification history of `environment`.
    package func setNotificationHistory(_ items: [NotificationHistoryItem], environment: AppStoreAPIHost) {
        notifications[environment] = items
    }

    /// Answers the next requests with `faults`, one each, in order.
    package func inject(_ faults: [Fault]) {
        self.faults += faults
    }

    /// Sets whether production answers 401.
    package func setProductionUnreleased(_ value: Bool) {
        productionUnreleased = value
    }

    /// Code run before answering a request for a path (Get All Subscription Statuses only): how a test changes the world
    /// between two of the server's requests.
    var hooks: [String: @Sendable () async -> Void] = [:]

    /// Runs `hook` before answering each request for `path` (`/inApps/v1/subscriptions/<id>`).
    package func setHook(for path: String, _ hook: @escaping @Sendable () async -> Void) {
        hooks[path] = hook
    }

    /// Every Get Notification History request's body, in order, with the environment it went to.
    package private(set) var historyRequests: [(environment: AppStoreAPIHost, request: NotificationHistoryRequest)] = []
    /// Answers the next Get Notification History requests with `hasMore` but no page token (Apple misbehaving).
    package var omitsPaginationToken = false

    /// Sets ``omitsPaginationToken``.
    package func setOmitsPaginationToken(_ value: Bool) { omitsPaginationToken = value }

    func logHistory(_ request: NotificationHistoryRequest, environment: AppStoreAPIHost) { historyRequests.append((environment, request)) }

    func log(_ request: LoggedRequest) { requests.append(request) }
    func logToken(header: Data, claims: Data) { receivedTokens.append((header, claims)) }
    func nextFault() -> Fault? { faults.isEmpty ? nil : faults.removeFirst() }
    func countTestNotification() { testNotificationsRequested += 1 }
}
