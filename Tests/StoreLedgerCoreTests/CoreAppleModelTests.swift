import Foundation
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import Testing

/// Decoding Apple's example payloads (Sources/StoreLedgerCoreTestSupport/AppleSamples/models, MIT, from
/// app-store-server-library-swift) and the edge cases Apple's data has.
@Suite("Core: Apple payload models")
struct CoreAppleModelTests {
    /// Loads one of Apple's example model files.
    func fixture(_ name: String) throws -> Data {
        try AppleSampleModels.data(named: name)
    }

    /// Decodes a fixture as a type.
    func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try JSONDecoder().decode(type, from: fixture(name))
    }

    /// Encodes and decodes again; the value must survive.
    func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(T.self, from: data) == value)
    }

    /// Apple's SUBSCRIBED/INITIAL_BUY example: every field, and a lossless round trip.
    @Test func signedNotification() throws {
        let payload = try decode(NotificationPayload.self, "signedNotification")
        #expect(payload.notificationType == .subscribed)
        #expect(payload.subtype == .initialBuy)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == 1_698_148_900_000)
        let data = try #require(payload.data)
        #expect(data.environment == .localTesting)
        #expect(data.appAppleID == 41234)
        #expect(data.bundleID == "com.example")
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
        #expect(payload.summary == nil && payload.externalPurchaseToken == nil && payload.appData == nil)
        try roundTrip(payload)
    }

    /// A CONSUMPTION_REQUEST carries its reason.
    @Test func consumptionRequestNotification() throws {
        let payload = try decode(NotificationPayload.self, "signedConsumptionRequestNotification")
        #expect(payload.notificationType == .consumptionRequest)
        #expect(payload.subtype == nil)
        #expect(payload.data?.consumptionRequestReason == .unintendedPurchase)
        try roundTrip(payload)
    }

    /// EXTERNAL_PURCHASE_TOKEN in production and sandbox (told apart by the id prefix).
    @Test(arguments: ["signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification"])
    func externalPurchaseTokenNotification(name: String) throws {
        let payload = try decode(NotificationPayload.self, name)
        #expect(payload.notificationType == .externalPurchaseToken)
        #expect(payload.subtype == .unreported)
        let token = try #require(payload.externalPurchaseToken)
        #expect(token.tokenCreationDate == 1_698_148_950_000)
        #expect(token.appAppleID == 55555)
        #expect(token.bundleID == "com.example")
        #expect(token.isSandbox == name.contains("Sandbox"))
        try roundTrip(payload)
    }

    /// RESCIND_CONSENT carries appData.
    @Test func rescindConsentNotification() throws {
        let payload = try decode(NotificationPayload.self, "signedRescindConsentNotification")
        #expect(payload.notificationType == .rescindConsent)
        let appData = try #require(payload.appData)
        #expect(appData.environment == .localTesting)
        #expect(appData.appAppleID == 41234)
        #expect(appData.signedAppTransactionInfo == "signed_app_transaction_info_value")
        try roundTrip(payload)
    }

    /// RENEWAL_EXTENSION/SUMMARY carries the summary.
    @Test func summaryNotification() throws {
        let payload = try decode(NotificationPayload.self, "signedSummaryNotification")
        #expect(payload.notificationType == .renewalExtension)
        #expect(payload.subtype == .summary)
        let summary = try #require(payload.summary)
        #expect(summary.productID == "com.example.product")
        #expect(summary.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
        try roundTrip(payload)
    }

    /// Every §3 field of Apple's transaction example; unknown Advanced Commerce fields are ignored.
    @Test func signedTransaction() throws {
        let transaction = try decode(TransactionPayload.self, "signedTransaction")
        #expect(transaction.transactionID == "23456")
        #expect(transaction.originalTransactionID == "12345")
        #expect(transaction.webOrderLineItemID == "34343")
        #expect(transaction.bundleID == "com.example")
        #expect(transaction.productID == "com.example.product")
        #expect(transaction.subscriptionGroupIdentifier == "55555")
        #expect(transaction.purchaseDate == 1_698_148_900_000)
        #expect(transaction.originalPurchaseDate == 1_698_148_800_000)
        #expect(transaction.expiresDate == 1_698_149_000_000)
        #expect(transaction.quantity == 1)
        #expect(transaction.type == .autoRenewable)
        #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.signedDate == 1_698_148_900_000)
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.revocationDate == 1_698_148_950_000)
        #expect(transaction.isUpgraded == true)
        #expect(transaction.offerType == .introductory)
        #expect(transaction.offerIdentifier == "abc.123")
        #expect(transaction.environment == .localTesting)
        #expect(transaction.transactionReason == .purchase)
        #expect(transaction.storefront == "USA")
        #expect(transaction.storefrontID == "143441")
        #expect(transaction.price == 10_990)
        #expect(transaction.currency == "USD")
        #expect(transaction.offerDiscountType == .payAsYouGo)
        #expect(transaction.appTransactionID == "71134")
        #expect(transaction.offerPeriod == "P1Y")
        #expect(transaction.subscriptionKey == SubscriptionKey(environment: .localTesting, originalTransactionID: "12345"))
        #expect(transaction.purchaseKey == nil)
        try roundTrip(transaction)
    }

    /// A prorated refund's revocation fields.
    @Test func signedTransactionWithRevocation() throws {
        let transaction = try decode(TransactionPayload.self, "signedTransactionWithRevocation")
        #expect(transaction.revocationType == .refundProrated)
        #expect(transaction.revocationPercentage == 50_000)
        #expect(transaction.revocationDate == 1_698_148_950_000)
        try roundTrip(transaction)
    }

    /// Every §4 field of Apple's renewal info example.
    @Test func signedRenewalInfo() throws {
        let renewal = try decode(RenewalInfoPayload.self, "signedRenewalInfo")
        #expect(renewal.expirationIntent == .customerCancelled)
        #expect(renewal.originalTransactionID == "12345")
        #expect(renewal.autoRenewProductID == "com.example.product.2")
        #expect(renewal.productID == "com.example.product")
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.isInBillingRetryPeriod == true)
        #expect(renewal.priceIncreaseStatus == .noResponse)
        #expect(renewal.gracePeriodExpiresDate == 1_698_148_900_000)
        #expect(renewal.offerType == .promotional)
        #expect(renewal.offerIdentifier == "abc.123")
        #expect(renewal.signedDate == 1_698_148_800_000)
        #expect(renewal.environment == .localTesting)
        #expect(renewal.recentSubscriptionStartDate == 1_698_148_800_000)
        #expect(renewal.renewalDate == 1_698_148_850_000)
        #expect(renewal.renewalPrice == 9_990)
        #expect(renewal.currency == "USD")
        #expect(renewal.offerDiscountType == .payAsYouGo)
        #expect(renewal.eligibleWinBackOfferIDs == ["eligible1", "eligible2"])
        #expect(renewal.appTransactionID == "71134")
        #expect(renewal.offerPeriod == "P1Y")
        #expect(renewal.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        try roundTrip(renewal)
    }

    /// Xcode signs fractional milliseconds (apple/xcode/xcode-signed-transaction, decoded).
    @Test func xcodeFractionalMilliseconds() throws {
        let json = """
            {"inAppOwnershipType":"PURCHASED","purchaseDate":1697679936049.7297,"subscriptionGroupIdentifier":"6F3A93AB",\
            "signedDate":1697679936056.485,"originalPurchaseDate":1697679936049.7297,"isUpgraded":false,"offerType":1,\
            "quantity":1,"transactionId":"0","type":"Auto-Renewable Subscription","transactionReason":"PURCHASE",\
            "productId":"pass.premium","expiresDate":1700358336049.7297,"environment":"Xcode","storefrontId":"143441",\
            "originalTransactionId":"0","bundleId":"com.example.naturelab.backyardbirds.example","webOrderLineItemId":"0",\
            "storefront":"USA","deviceVerificationNonce":"7edea87d-98f0-42d0-9682-49ca81022f73"}
            """
        let transaction = try JSONDecoder().decode(TransactionPayload.self, from: Data(json.utf8))
        #expect(transaction.environment == .xcode)
        let purchase = try #require(transaction.purchaseDate)
        #expect(abs(purchase.millisecondsSince1970 - 1_697_679_936_049.7297) < 0.001)
        #expect(abs(purchase.date.timeIntervalSince1970 - 1_697_679_936.0497297) < 0.000_01)
        #expect(transaction.signedDate! > transaction.purchaseDate!)
        try roundTrip(transaction)

        let renewalJSON = """
            {"productId":"pass.premium","renewalDate":1700358336049.7297,"originalTransactionId":"0",\
            "recentSubscriptionStartDate":1697679936049.7297,"autoRenewStatus":1,"signedDate":1697679936711.0747,\
            "environment":"Xcode","autoRenewProductId":"pass.premium"}
            """
        let renewal = try JSONDecoder().decode(RenewalInfoPayload.self, from: Data(renewalJSON.utf8))
        #expect(renewal.autoRenewStatus == .on)
        #expect(renewal.signedDate.map { $0.millisecondsSince1970 > 1_697_679_936_711 } == true)
    }

    /// Apple's empty appAccountToken decodes as none.
    @Test func emptyAppAccountTokenMeansNone() throws {
        let transaction = try JSONDecoder().decode(
            TransactionPayload.self, from: Data(#"{"transactionId":"1","appAccountToken":""}"#.utf8))
        #expect(transaction.appAccountToken == nil)
        let renewal = try JSONDecoder().decode(
            RenewalInfoPayload.self, from: Data(#"{"appAccountToken":""}"#.utf8))
        #expect(renewal.appAccountToken == nil)
    }

    /// New types, subtypes, environments and enum values decode as themselves and round-trip.
    @Test func unknownValuesDecodeAsThemselves() throws {
        let json = """
            {"notificationType":"SOMETHING_NEW","subtype":"BRAND_NEW","signedDate":1,\
            "data":{"environment":"Staging","status":9,"consumptionRequestReason":"NEW_REASON"}}
            """
        let payload = try JSONDecoder().decode(NotificationPayload.self, from: Data(json.utf8))
        #expect(payload.notificationType == NotificationType(rawValue: "SOMETHING_NEW"))
        #expect(payload.subtype?.rawValue == "BRAND_NEW")
        #expect(payload.data?.environment?.rawValue == "Staging")
        #expect(payload.data?.status?.rawValue == 9)
        #expect(payload.data?.status.flatMap(SubscriptionStatus.init(code:)) == nil)
        try roundTrip(payload)

        let transaction = try JSONDecoder().decode(
            TransactionPayload.self,
            from: Data(#"{"type":"Future Product","inAppOwnershipType":"BORROWED","offerType":7,"revocationType":"X"}"#.utf8))
        #expect(transaction.type?.rawValue == "Future Product")
        #expect(transaction.inAppOwnershipType?.rawValue == "BORROWED")
        #expect(transaction.offerType?.rawValue == 7)
        #expect(transaction.revocationType?.rawValue == "X")
    }

    /// Every field is optional.
    @Test func emptyObjectsDecode() throws {
        let empty = Data("{}".utf8)
        #expect(try JSONDecoder().decode(NotificationPayload.self, from: empty) == NotificationPayload())
        #expect(try JSONDecoder().decode(TransactionPayload.self, from: empty) == TransactionPayload())
        #expect(try JSONDecoder().decode(RenewalInfoPayload.self, from: empty) == RenewalInfoPayload())
        #expect(try JSONDecoder().decode(AppTransactionPayload.self, from: empty) == AppTransactionPayload())
    }

    /// Typed ids and timestamps encode as bare JSON values; numeric ids are accepted.
    @Test func identifiersAreBareStrings() throws {
        #expect(String(decoding: try JSONEncoder().encode(TransactionID("2000000123")), as: UTF8.self) == #""2000000123""#)
        #expect(try JSONDecoder().decode(TransactionID.self, from: Data(#""42""#.utf8)) == "42")
        #expect(try JSONDecoder().decode(TransactionID.self, from: Data("42".utf8)) == "42")
        #expect(String(decoding: try JSONEncoder().encode(Timestamp(integerLiteral: 1_698_148_900_000)), as: UTF8.self) == "1698148900000")
    }

    /// The minimal app transaction model.
    @Test func appTransaction() throws {
        let json = """
            {"receiptType":"Sandbox","appAppleId":1234,"bundleId":"com.example","applicationVersion":"2",\
            "originalApplicationVersion":"1","originalPurchaseDate":1698148800000,"receiptCreationDate":1698148900000,\
            "appTransactionId":"71134","originalPlatform":"iOS","deviceVerification":"x"}
            """
        let app = try JSONDecoder().decode(AppTransactionPayload.self, from: Data(json.utf8))
        #expect(app.receiptType == .sandbox)
        #expect(app.appTransactionID == "71134")
        #expect(app.originalPurchaseDate == 1_698_148_800_000)
        try roundTrip(app)
    }
}
