import Foundation
import StoreLedgerCoreTestSupport
import Testing

@testable import StoreLedgerAppStoreAPI

/// Apple's own sample answers of the App Store Server API (from app-store-server-library-swift, MIT) decode into
/// the client's models, and its error bodies classify as Apple documents them.
@Suite("App Store Server API: Apple's sample answers")
struct AppleModelDecodingTests {
    static func model(_ name: String) throws -> Data {
        try AppleSampleModels.data(named: name)
    }

    @Test func successAnswersDecode() throws {
        let history = try JSONDecoder().decode(TransactionHistoryPage.self, from: try Self.model("transactionHistoryResponse"))
        #expect(history.revision == "revision_output")
        #expect(history.hasMore)
        #expect(history.signedTransactions == ["signed_transaction_value", "signed_transaction_value2"])
        #expect(history.appAppleId == 323_232)

        let statuses = try JSONDecoder().decode(SubscriptionStatusesResponse.self, from: try Self.model("getAllSubscriptionStatusesResponse"))
        #expect(statuses.data.count == 2)
        #expect(statuses.data[0].lastTransactions.map(\.status) == [1, 5])
        #expect(statuses.data[1].lastTransactions.first?.originalTransactionId == "3413453")

        let notifications = try JSONDecoder().decode(NotificationHistoryPage.self, from: try Self.model("getNotificationHistoryResponse"))
        #expect(notifications.paginationToken == "57715481-805a-4283-8499-1c19b5d6b20a")
        #expect(notifications.notificationHistory.map(\.signedPayload) == ["signed_payload_one", "signed_payload_two"])
        #expect(notifications.notificationHistory[0].sendAttempts?.last?.sendAttemptResult == "SUCCESS")

        let test = try JSONDecoder().decode(NotificationHistoryItem.self, from: try Self.model("getTestNotificationStatusResponse"))
        #expect(test.sendAttempts?.count == 2)
    }

    @Test(arguments: [
        // Apple's GeneralInternalError: not to be retried at once, unlike 5000001 (GeneralInternalRetryableError).
        ("apiException", 5_000_000, "serverError", 500),
        ("apiTooManyRequestsException", 4_290_000, "rateLimited", 429),
        ("transactionIdNotFoundError", 4_040_010, "transactionNotFound", 404),
        ("invalidTransactionIdError", 4_000_006, "invalidTransactionID", 400),
    ])
    func errorBodiesClassify(_ name: String, _ code: Int, _ expected: String, _ status: Int) throws {
        let body = try JSONDecoder().decode(AppStoreAPIClient.AppleErrorBody.self, from: try Self.model(name))
        #expect(body.errorCode == code)
        let error = AppStoreAPIError.from(status: status, appleCode: body.errorCode, message: body.errorMessage)
        #expect(error.code.description == expected)
        #expect(error.appleErrorMessage?.isEmpty == false)
    }
}
