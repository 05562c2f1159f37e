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

    @Test(arguments: ["", "not base64!", "aGVsbG8gd29ybGQ=", "MIIBAAAA", "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"])
    func anythingElseIsAClearError(_ input: String) {
        #expect(throws: AppReceiptError.self) { _ = try AppReceipt(base64Encoded: input) }
    }

    @Test func aTruncatedReceiptIsAnErrorNotACrash() throws {
        let bytes = try #require(Data(base64Encoded: try Self.fixture("xcode-app-receipt-with-transaction").filter { !$0.isWhitespace }))
        for length in stride(from: 1, to: bytes.count, by: max(1, bytes.count / 40)) {
            #expect(throws: AppReceiptError.self) { _ = try AppReceipt(der: [UInt8](bytes.prefix(length))) }
        }
    }
}
