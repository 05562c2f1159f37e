import Foundation
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

@Suite("Reconciler: missed notifications from Get Notification History")
struct ReconcilerTests {
    static let pki = try! TestPKI()

    @Test func appendsOnlyWhatTheLogNeverReceivedAndWorkersProcessIt() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let signer = pipeline.signer
                let received = try signer.signedNotification(
                    type: "DID_RENEW", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "11"))
                let missed = try signer.signedNotification(
                    type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "12"))
                let failed = try signer.signedNotification(
                    type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signedDate: Date(),
                    renewalInfo: signer.renewalInfoPayload(originalTransactionID: "12"))
                let pendingDelivery = try signer.signedNotification(type: "TEST", signedDate: Date())
                // One was delivered and processed, one was delivered and still waits for a worker.
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(received)"}"#)
                try await pipeline.drain()
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(pendingDelivery)"}"#)
                await fake.state.setNotificationHistory(
                    [received, missed, failed, pendingDelivery].map {
                        NotificationHistoryItem(signedPayload: $0, sendAttempts: [.init(attemptDate: 1, sendAttemptResult: "TIMED_OUT")])
                    },
                    environment: .sandbox
                )
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox]
                )
                let first = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                #expect(first == .init(listed: 4, appended: 2))
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation' AND environment_hint = 'sandbox'") == 2)
                try await pipeline.drain()
                #expect(try await db.scalar("SELECT count(*) FROM notifications") == 4)
                // Idempotent: a second run appends nothing.
                let second = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: true, logger: db.logger)
                #expect(second == .init(listed: 4, appended: 0))
                let requests = await fake.state.requests
                #expect(requests.allSatisfy { $0.path == "/inApps/v1/notifications/history" && $0.environment == .sandbox })
            }
        }
    }

    @Test func aNotificationThatNeverVerifiesIsNotAppendedTwice() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let forged = try TestSigner(pki: try TestPKI(), bundleID: "com.example.app").signedNotification(type: "TEST", signedDate: Date())
                await fake.state.setNotificationHistory([NotificationHistoryItem(signedPayload: forged, sendAttempts: nil)], environment: .production)
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.production]
                )
                #expect(
                    try await reconciler.run(from: Date().addingTimeInterval(-60), to: Date(), onlyFailures: false, logger: db.logger).appended == 1)
                try await pipeline.drain()
                #expect(try await pipeline.count(.rejected) == 1)
                #expect(
                    try await reconciler.run(from: Date().addingTimeInterval(-60), to: Date(), onlyFailures: false, logger: db.logger).appended == 0)
            }
        }
    }
}
