import Foundation
import StoreLedgerVerification
import Testing

@Suite("Legacy receipts: transaction ids read from app receipts (swift-asn1) and StoreKit 1 transaction receipts")
struct AppReceiptTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: Bundle.module.resourceURL!.appendingPathComponent("Fixtures/apple/xcode/\(name)"), encoding: .utf8)
    }

    @Test func xcodesReceiptWithATransactionNamesIt() throws {
        let receipt = try AppReceipt(base64Encoded: try Self.fixture("xcode-app-receipt-with-transaction"))
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.inAppPurchases.count == 1)
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["0"])
        #expect(receipt.inAppPurchases.first?.productID?.isEmpty == false)
    }

    /// The newest purchase of each product, the subscription's first: what /verify looks up.
    @Test func theNewestPurchaseOfEachProductSubscriptionFirst() throws {
        let receipt = try AppReceipt(
            base64Encoded: AppReceiptDER.base64(purchases: [
                .init(
                    productID: "monthly", transactionID: "10", originalTransactionID: "10", purchaseDate: "2025-01-01T00:00:00Z",
                    expiresDate: "2025-02-01T00:00:00Z"),
                .init(
                    productID: "monthly", transactionID: "11", originalTransactionID: "10", purchaseDate: "2025-02-01T00:00:00Z",
                    expiresDate: "2025-03-01T00:00:00Z"),
                .init(productID: "coins", transactionID: "20", originalTransactionID: "20", purchaseDate: "2025-02-10T00:00:00Z"),
                .init(productID: "coins", transactionID: "21", originalTransactionID: "21", purchaseDate: "2025-02-11T00:00:00Z"),
                .init(productID: "lifetime", transactionID: "30", originalTransactionID: "30", purchaseDate: "2024-06-01T00:00:00Z"),
            ]))
        #expect(receipt.bundleID == "com.example.storeledger")
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["11", "21", "30"])
    }

    /// Apple's receipts carry every field of each in-app purchase, those that do not apply empty: a consumable's or a
    /// non-consumable's expiry (1708) is an empty IA5String. It is no expiry: the subscription is still the one looked
    /// up first, though a newer purchase of another product is listed before it by date.
    @Test func anEmptyExpiryIsNoExpiry() throws {
        let receipt = try AppReceipt(
            base64Encoded: AppReceiptDER.base64(purchases: [
                .init(
                    productID: "monthly", transactionID: "10", originalTransactionID: "10", purchaseDate: "2025-01-01T00:00:00Z",
                    expiresDate: "2025-02-01T00:00:00Z"),
                .init(productID: "coins", transactionID: "20", originalTransactionID: "20", purchaseDate: "2025-02-10T00:00:00Z", expiresDate: ""),
            ]))
        #expect(receipt.inAppPurchases.map(\.expiresDate) == ["2025-02-01T00:00:00Z", nil])
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["10", "20"])
    }

    @Test func anEmptyReceiptNamesNoTransaction() throws {
        let receipt = try AppReceipt(base64Encoded: try Self.fixture("xcode-app-receipt-empty"))
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID).isEmpty)
    }

    @Test(arguments: [
        ("", AppReceiptError.Code.notBase64), ("not base64!", .notBase64), ("eyJhbGciOiJFUzI1NiJ9.e30.c2ln", .notBase64),
        ("aGVsbG8gd29ybGQ=", .malformed), ("MIIBAAAA", .malformed),
    ])
    func anythingElseIsAClearError(_ input: String, _ code: AppReceiptError.Code) {
        let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: input) }
        #expect(error?.code == code)
    }

    @Test func aTruncatedReceiptIsAnErrorNotACrash() throws {
        let bytes = try #require(Data(base64Encoded: try Self.fixture("xcode-app-receipt-with-transaction").filter { !$0.isWhitespace }))
        for length in stride(from: 1, to: bytes.count, by: max(1, bytes.count / 40)) {
            let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(der: [UInt8](bytes.prefix(length))) }
            #expect(error?.code == .malformed)
        }
    }

    /// A transaction receipt as StoreKit 1 wrote one (`SKPaymentTransaction.transactionReceipt`): an old-style
    /// property list whose base64 `purchase-info` is another.
    static func transactionReceipt(purchaseInfo: String, extra: String = "") -> String {
        let outer = """
            {
            \t"signature" = "AkpOTZ0Q2xTz+a4b7c8d9e0f1g2h3i4j5k6l7m8n9o0=";
            \t"purchase-info" = "\(Data(purchaseInfo.utf8).base64EncodedString())";
            \t"environment" = "Sandbox";
            \t"pod" = "100";
            \t"signing-status" = "0";\(extra)
            }
            """
        return Data(outer.utf8).base64EncodedString()
    }

    static let purchaseInfo = """
        {
        \t"original-purchase-date-pst" = "2013-05-28 13:00:00 America/Los_Angeles";
        \t"original-transaction-id" = "1000000077000001";
        \t"bvrs" = "1.0";
        \t"transaction-id" = "1000000077000002";
        \t"quantity" = "1";
        \t"product-id" = "com.example.storeledger.monthly";
        \t"item-id" = "637832456";
        \t"bid" = "com.example.storeledger";
        \t"purchase-date" = "2013-06-28 20:00:00 Etc/GMT";
        \t"title" = "Premium \\"monthly\\"";
        }
        """

    @Test func applesLegacyTransactionReceiptNamesItsTransaction() throws {
        let receipt = try AppReceipt(base64Encoded: try Self.fixture("../mock_signed_data/legacyTransaction"))
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["33993399"])
        #expect(receipt.bundleID == nil)
    }

    @Test func aStoreKit1TransactionReceiptNamesItsTransactionAndProduct() throws {
        let receipt = try AppReceipt(base64Encoded: Self.transactionReceipt(purchaseInfo: Self.purchaseInfo))
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["1000000077000002"])
        #expect(receipt.bundleID == "com.example.storeledger")
        #expect(receipt.appVersion == "1.0")
        #expect(receipt.inAppPurchases.count == 1)
        #expect(receipt.inAppPurchases.first?.productID == "com.example.storeledger.monthly")
        #expect(receipt.inAppPurchases.first?.originalTransactionID == "1000000077000001")
        // A purchase-info without a transaction id names no transaction (the route answers receipt_has_no_transactions).
        let anonymous = try AppReceipt(base64Encoded: Self.transactionReceipt(purchaseInfo: #"{ "bid" = "com.example.storeledger"; }"#))
        #expect(anonymous.newestOfEachProduct.isEmpty)
    }

    @Test(arguments: [
        (#"{ "signature" = "x"; }"#, "no purchase-info"),
        (#"{ "purchase-info" = "not base64!"; }"#, "not base64"),
        (#"{ "purchase-info" = "e30=" }"#, "expected ;"),
        (#"{ "purchase-info" = "e30="; "purchase-info" = "e30="; }"#, "twice"),
        (#"{ "purchase-info" = "e30="; } trailing"#, "after its closing"),
        (#"{ "purchase-info" = "e30=; }"#, "not closed"),
        (#"{ purchase-info = "e30="; }"#, "expected a quoted string"),
    ])
    func aBrokenTransactionReceiptIsAClearError(_ text: String, _ detail: String) {
        let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: Data(text.utf8).base64EncodedString()) }
        #expect(error?.code == .malformed)
        #expect(error?.detail.contains(detail) == true, "\(error?.detail ?? "")")
    }

    @Test func aTruncatedTransactionReceiptIsAnErrorNotACrash() throws {
        let text = try #require(Data(base64Encoded: Self.transactionReceipt(purchaseInfo: Self.purchaseInfo)))
        for length in 1..<text.count {
            let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: text.prefix(length).base64EncodedString()) }
            #expect(error?.code == .malformed)
        }
    }

    @Test func lineEndingsPaddingEscapesAndAMissingTransactionIdAreReadAsAppleWritesThem() throws {
        // CRLF line ends, whitespace before the brace, NUL padding after it, escapes, and no transaction-id (its original
        // id is looked up instead).
        let inner =
            "\r\n{\r\n\t\"original-transaction-id\" = \"1000000077000009\";\r\n\t\"transaction-id\" = \"\";\r\n"
            + "\t\"title\" = \"a\\rb\\U00e9\\\\\";\r\n}\r\n"
        let outer = "  {\r\n\t\"purchase-info\" = \"\(Data(inner.utf8).base64EncodedString())\";\r\n}\u{0}\u{0}\n"
        let receipt = try AppReceipt(base64Encoded: Data(outer.utf8).base64EncodedString())
        #expect(receipt.newestOfEachProduct.compactMap(\.lookupID) == ["1000000077000009"])
        #expect(receipt.inAppPurchases.first?.transactionID == nil)
        // Bytes other than whitespace or NUL after the brace are still refused.
        let trailing = outer + "x"
        let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: Data(trailing.utf8).base64EncodedString()) }
        #expect(error?.code == .malformed)
    }

    @Test func aTruncatedPurchaseInfoIsAnErrorNotACrash() throws {
        let inner = Array(Self.purchaseInfo.utf8)
        for length in 0..<inner.count {
            let outer = #"{ "purchase-info" = ""# + Data(inner.prefix(length)).base64EncodedString() + #""; }"#
            let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: Data(outer.utf8).base64EncodedString()) }
            #expect(error?.code == .malformed)
        }
    }

    @Test func aKeyNamedTwiceIsNotEchoedWhole() {
        let key = String(repeating: "k", count: 10_000)
        let text = "{ \"\(key)\" = \"a\"; \"\(key)\" = \"b\"; }"
        let error = #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: Data(text.utf8).base64EncodedString()) }
        #expect(error?.code == .malformed)
        #expect((error?.detail.count ?? .max) < 200)
    }
}
