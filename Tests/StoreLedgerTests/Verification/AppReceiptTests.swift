import Foundation
import StoreLedgerVerification
import Testing

@Suite("Legacy app receipts: transaction ids read with swift-asn1")
struct AppReceiptTests {
    static func fixture(_ name: String) throws -> String {
        try String(contentsOf: Bundle.module.resourceURL!.appendingPathComponent("Fixtures/apple/xcode/\(name)"), encoding: .utf8)
    }

    @Test func xcodesReceiptWithATransactionNamesIt() throws {
        let receipt = try AppReceipt(base64Encoded: try Self.fixture("xcode-app-receipt-with-transaction"))
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.inAppPurchases.count == 1)
        #expect(receipt.transactionIDs == ["0"])
        #expect(receipt.inAppPurchases.first?.productID?.isEmpty == false)
    }

    @Test func anEmptyReceiptNamesNoTransaction() throws {
        let receipt = try AppReceipt(base64Encoded: try Self.fixture("xcode-app-receipt-empty"))
        #expect(receipt.bundleID == "com.example.naturelab.backyardbirds.example")
        #expect(receipt.inAppPurchases.isEmpty)
        #expect(receipt.transactionIDs.isEmpty)
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
}
