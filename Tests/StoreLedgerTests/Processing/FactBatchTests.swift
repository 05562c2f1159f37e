import Foundation
import StoreLedgerCore
import Testing

@testable import StoreLedgerStore

/// A claimed batch's facts: one row per distinct signed content, a fact of its own only for signed data that arrived on
/// its own (nested signed data is part of its notification's fact).
@Suite("Processing: fact batch")
struct FactBatchTests {
    /// A subscription transaction and its JSON text.
    let transaction: TransactionPayload = {
        var transaction = TransactionPayload()
        transaction.originalTransactionID = "7000"
        transaction.transactionID = "7001"
        transaction.type = .autoRenewable
        transaction.environment = .sandbox
        return transaction
    }()
    let transactionJSON = Data(#"{"originalTransactionId":"7000","transactionId":"7001"}"#.utf8)

    /// Adds a notification nesting `transaction`, delivered by `eventID`.
    func addNotification(to batch: inout FactBatch, eventID: Int64) {
        let fact = NotificationFact(payload: NotificationPayload(), transaction: transaction)
        batch.addNotification(
            fact, uuid: NotificationUUID("n-\(eventID)"), contentDigest: Array(repeating: UInt8(eventID), count: 32),
            payloadJSON: Data("{}".utf8), transactionJSON: transactionJSON, renewalInfoJSON: nil, eventID: EventID(eventID)
        )
    }

    @Test("nested only: one row, not standalone, no fact of its own")
    func nestedOnly() throws {
        var batch = FactBatch()
        addNotification(to: &batch, eventID: 5)
        addNotification(to: &batch, eventID: 3)
        let row = try #require(batch.transactions.values.first)
        #expect(batch.transactions.count == 1)
        #expect(!row.standalone && row.fact == nil && row.firstEventID == 3)
        #expect(batch.refoldedFacts.count == 2)  // the two notifications
        #expect(batch.newFacts(notifications: [], transactions: [row.digestHex], renewalInfos: []).isEmpty)
    }

    @Test("nested and standalone in one batch, in either order: one standalone row with the standalone fact")
    func nestedAndStandalone() throws {
        for standaloneFirst in [true, false] {
            var batch = FactBatch()
            if standaloneFirst { batch.addTransaction(transaction, payloadJSON: transactionJSON, eventID: EventID(9)) }
            addNotification(to: &batch, eventID: 4)
            if !standaloneFirst { batch.addTransaction(transaction, payloadJSON: transactionJSON, eventID: EventID(9)) }
            let row = try #require(batch.transactions.values.first)
            #expect(batch.transactions.count == 1)
            #expect(row.standalone && row.fact == .transaction(transaction) && row.firstEventID == 4, "standalone first: \(standaloneFirst)")
            #expect(batch.newFacts(notifications: [], transactions: [row.digestHex], renewalInfos: []) == [.transaction(transaction)])
            #expect(batch.refoldedFacts.contains { $0.digestHex == row.digestHex && $0.fact == .transaction(transaction) })
        }
    }
}
