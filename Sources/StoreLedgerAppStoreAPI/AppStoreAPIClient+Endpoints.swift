import Foundation
package import Logging
import NIOHTTP1

extension AppStoreAPIClient {
    /// Get Transaction Info: the signed transaction (JWS) with this id.
    package func transactionInfo(transactionID: String, environment: AppStoreAPIHost, logger: Logger) async throws(AppStoreAPIError) -> String {
        struct Answer: Decodable { var signedTransactionInfo: String }
        return try await send(
            .GET, "/inApps/v1/transactions/\(Self.pathComponent(transactionID))", endpoint: "Get Transaction Info", environment: environment,
            logger: logger, as: Answer.self
        )
        .signedTransactionInfo
    }

    /// Get Transaction Info from production, then from the sandbox when production does not know the transaction
    /// (4040010) or refuses us because the app is not yet released there (401). Returns the JWS and the environment
    /// that answered; throws ``AppStoreAPIError/Code/transactionNotFound`` when neither knows it.
    package func transactionInfoAnyEnvironment(
        transactionID: String, logger: Logger
    ) async throws(AppStoreAPIError) -> (signedTransactionInfo: String, environment: AppStoreAPIHost) {
        do {
            return (try await transactionInfo(transactionID: transactionID, environment: .production, logger: logger), .production)
        } catch  where error.code == .transactionNotFound || error.code == .unauthorized {
            logger.debug("not in production; asking the sandbox", metadata: ["transaction": "\(transactionID)", "production": "\(error.code)"])
        }
        return (try await transactionInfo(transactionID: transactionID, environment: .sandbox, logger: logger), .sandbox)
    }

    /// One page of Get Transaction History v2.
    package func transactionHistoryPage(
        transactionID: String, revision: String?, environment: AppStoreAPIHost, logger: Logger
    ) async throws(AppStoreAPIError) -> TransactionHistoryPage {
        try await send(
            .GET, "/inApps/v2/history/\(Self.pathComponent(transactionID))", endpoint: "Get Transaction History",
            query: revision.map { [("revision", $0)] } ?? [], environment: environment, logger: logger
        )
    }

    /// Every signed transaction of the customer's history, following `revision` while `hasMore`.
    package func transactionHistory(transactionID: String, environment: AppStoreAPIHost, logger: Logger) async throws(AppStoreAPIError) -> [String] {
        var all: [String] = []
        var revision: String?
        while true {
            let page = try await transactionHistoryPage(transactionID: transactionID, revision: revision, environment: environment, logger: logger)
            all += page.signedTransactions
            guard let next = try Self.nextPage(after: revision, hasMore: page.hasMore, token: page.revision, endpoint: "Get Transaction History")
            else { return all }
            revision = next
        }
    }

    /// Get All Subscription Statuses of the customer who made this transaction.
    package func allSubscriptionStatuses(
        transactionID: String, environment: AppStoreAPIHost, logger: Logger
    ) async throws(AppStoreAPIError) -> SubscriptionStatusesResponse {
        try await send(
            .GET, "/inApps/v1/subscriptions/\(Self.pathComponent(transactionID))", endpoint: "Get All Subscription Statuses",
            environment: environment, logger: logger)
    }

    /// One page of Get Notification History.
    package func notificationHistoryPage(
        _ request: NotificationHistoryRequest, paginationToken: String?, environment: AppStoreAPIHost, logger: Logger
    ) async throws(AppStoreAPIError) -> NotificationHistoryPage {
        try await send(
            .POST, "/inApps/v1/notifications/history", endpoint: "Get Notification History",
            query: paginationToken.map { [("paginationToken", $0)] } ?? [], body: request, environment: environment, logger: logger
        )
    }

    /// Every notification in the window, following `paginationToken` while `hasMore`.
    package func notificationHistory(
        _ request: NotificationHistoryRequest, environment: AppStoreAPIHost, logger: Logger
    ) async throws -> [NotificationHistoryItem] {
        var all: [NotificationHistoryItem] = []
        try await notificationHistory(request, environment: environment, logger: logger) { all += $0 }
        return all
    }

    /// Every notification in the window, handed to `eachPage` a page at a time as it arrives (following
    /// `paginationToken` while `hasMore`): what a page held is dealt with before the next is asked for, so a failure on
    /// a later page (Apple's rate limit on page 300 of a long window) loses nothing of the pages before it.
    package func notificationHistory(
        _ request: NotificationHistoryRequest, environment: AppStoreAPIHost, logger: Logger,
        eachPage: ([NotificationHistoryItem]) async throws -> Void
    ) async throws {
        var token: String?
        while true {
            let page = try await notificationHistoryPage(request, paginationToken: token, environment: environment, logger: logger)
            try await eachPage(page.notificationHistory)
            guard let next = try Self.nextPage(after: token, hasMore: page.hasMore, token: page.paginationToken, endpoint: "Get Notification History")
            else { return }
            token = next
        }
    }

    /// The token of the page after one asked for with `current`: nil when the page says it is the last; an error when
    /// it says more follow but gives no new token, which would otherwise end the walk quietly with pages left unread
    /// (a reconciliation would count a window as asked that was not).
    static func nextPage(after current: String?, hasMore: Bool, token: String?, endpoint: String) throws(AppStoreAPIError) -> String? {
        guard hasMore else { return nil }
        guard let token, !token.isEmpty, token != current else {
            throw AppStoreAPIError(
                .malformedResponse, "\(endpoint) answered hasMore without a new page token (\(token.map { "'\($0)'" } ?? "none")): pages left unread")
        }
        return token
    }

    /// Request a Test Notification; returns its `testNotificationToken`.
    package func requestTestNotification(environment: AppStoreAPIHost, logger: Logger) async throws(AppStoreAPIError) -> String {
        struct Answer: Decodable { var testNotificationToken: String }
        return try await send(
            .POST, "/inApps/v1/notifications/test", endpoint: "Request a Test Notification", environment: environment, logger: logger,
            as: Answer.self
        ).testNotificationToken
    }

    /// Get Test Notification Status: the signed test notification and its send attempts.
    package func testNotificationStatus(
        token: String, environment: AppStoreAPIHost, logger: Logger
    ) async throws(AppStoreAPIError) -> NotificationHistoryItem {
        try await send(
            .GET, "/inApps/v1/notifications/test/\(Self.pathComponent(token))", endpoint: "Get Test Notification Status",
            environment: environment, logger: logger)
    }

    /// A transaction id or token as one URL path segment (ids are digits; anything else is percent-encoded).
    static func pathComponent(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }
}
