import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// Deployments that ran the old verification hold Sandbox notifications rejected for the route they arrived on;
/// migration 0013 puts them back to work, once, and the handler now accepts and projects them.
@Suite("Environments: upgrading requeues what the old rules rejected")
struct EnvironmentUpgradeTests {
    static let pki = try! TestPKI()
    /// Exactly what the old code wrote for a Sandbox notification judged by Production's rules.
    static let oldReason = "wrongApp: the payload for 'com.example.storeledger' carries no appAppleId, required in Production"

    /// Appends a notification body as the receiver does, on `route` with its hint.
    func receive(_ signedPayload: String, route: String, hint: EnvironmentHint?, db: TestDatabase) async throws -> EventID {
        try await EventLog(client: db.client).append(
            NewEvent(
                source: .appleNotification, environmentHint: hint, route: route,
                body: ByteBuffer(string: #"{"signedPayload":"\#(signedPayload)"}"#), contentType: "application/json"
            ),
            logger: db.logger
        ).id
    }

    /// Rejects every pending event as an old worker did, each for the reason `reason(id)` gives; in SQL the schema of
    /// that time has (today's claim reads columns that later migrations added).
    func rejectAsTheOldWorkerDid(_ db: TestDatabase, reason: (EventID) -> String) async throws {
        let pending = try await db.client.query("SELECT event_id FROM event_queue WHERE state = 'pending'", logger: db.logger)
            .decode(Int64.self).readToEnd()
        for id in pending {
            try await db.client.query(
                """
                UPDATE event_queue SET state = 'rejected', attempts = attempts + 1, reject_reason = \(reason(EventID(id))),
                    finished_at = now(), updated_at = now()
                WHERE event_id = \(id)
                """,
                logger: db.logger
            ).readToEnd()
        }
    }

    func state(of id: EventID, _ db: TestDatabase) async throws -> (String, String?) {
        let rows = try await db.client.query("SELECT state, reject_reason FROM event_queue WHERE event_id = \(id.rawValue)", logger: db.logger)
        for try await row in rows.decode((String, String?).self) { return row }
        return ("none", nil)
    }

    @Test func migration0013RequeuesTheOldWrongAppRejectionsOnceAndTheyAreProjected() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            let migrations = try Migration.bundled()
            #expect(migrations.contains { $0.name == "0013_requeue_wrong_environment_rejections" })
            try await Migrator(migrations: migrations.filter { $0.version < 13 }).migrate(client: db.client, logger: db.logger)

            // Before the upgrade: a real-shaped Sandbox notification (no appAppleId) on the Production URL and on
            // seed 000's webhook, both rejected by the old rules; a forgery rejected for its signature; a done event.
            let sandbox = TestSigner(pki: Self.pki)
            let expires = Date().addingTimeInterval(20 * 86_400)
            let uuid = UUID()
            let lostOnProductionURL = try await receive(
                try sandbox.signedNotification(
                    type: "SUBSCRIBED", subtype: "INITIAL_BUY", notificationUUID: uuid, signedDate: Date(),
                    transaction: sandbox.transactionPayload(
                        transactionID: "7001", purchaseDate: Date().addingTimeInterval(-86_400), expiresDate: expires, signedDate: Date()
                    ),
                    status: 1
                ),
                route: "/notifications/apple", hint: .production, db: db
            )
            let secondUUID = UUID()
            let lostOnWebhook = try await receive(
                try sandbox.signedNotification(
                    type: "DID_RENEW", notificationUUID: secondUUID, signedDate: Date(),
                    transaction: sandbox.transactionPayload(
                        transactionID: "7002", purchaseDate: Date().addingTimeInterval(-3_600), expiresDate: expires, signedDate: Date()
                    )
                ),
                route: "/api/v1/payments/appstore/webhook", hint: nil, db: db
            )
            let forged = try await receive(
                try sandbox.signedNotification(type: "TEST", signedDate: Date(), variant: .flippedSignatureByte),
                route: "/notifications/apple", hint: .production, db: db
            )
            try await rejectAsTheOldWorkerDid(db) { id in
                id == forged ? "badSignature: the ES256 signature does not match the signed header and payload" : Self.oldReason
            }
            #expect(try await state(of: lostOnProductionURL, db) == ("rejected", Self.oldReason))
            #expect(try await db.scalar("SELECT count(*) FROM notifications") == 0)

            // The upgrade: `storeledger migrate` (release phase) applies 0013 with the others.
            let applied = try await Migrator(migrations: migrations).migrate(client: db.client, logger: db.logger)
            #expect(applied.contains(13))
            #expect(try await state(of: lostOnProductionURL, db) == ("pending", nil))
            #expect(try await state(of: lostOnWebhook, db) == ("pending", nil))
            #expect(try await state(of: forged, db).0 == "rejected")
            let recorded = try await db.scalar(
                """
                SELECT count(*) FROM operator_actions
                WHERE action = 'requeue' AND previous_state = 'rejected'
                  AND requested_by = 'migration 0013_requeue_wrong_environment_rejections'
                  AND event_id IN (\(lostOnProductionURL.rawValue), \(lostOnWebhook.rawValue))
                """
            )
            #expect(recorded == 2)
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions") == 2)

            // New workers (APP_APPLE_ID set, both environments: the deployment that lost them) accept and project.
            let verifiers = try LedgerVerifiers(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)], environmentsSetting: nil,
                trust: try TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER])
            )
            let pipeline = LedgerPipeline(db, handler: LedgerHandler(verifiers: verifiers), signer: sandbox)
            try await pipeline.drain()
            #expect(try await state(of: lostOnProductionURL, db) == ("done", nil))
            #expect(try await state(of: lostOnWebhook, db) == ("done", nil))
            #expect(try await state(of: forged, db).1?.hasPrefix("badSignature") == true)
            for (id, notification) in [(lostOnProductionURL, uuid), (lostOnWebhook, secondUUID)] {
                #expect(
                    try await db.scalar(
                        """
                        SELECT count(*) FROM notifications
                        WHERE notification_uuid = \(notification.uuidString.lowercased()) AND delivery_count = 1 AND first_event_id = \(id.rawValue)
                        """
                    ) == 1)
            }
            let row = try #require(try await pipeline.subscription("7001"))
            #expect(row["status"] as? String == "active")
            #expect(row["entitled"] as? Bool == true)
            #expect(try await pipeline.subscription("7002") != nil)

            // Exactly once: migrating again is a no-op, nothing is pending, nothing is recorded twice.
            #expect(try await Migrator(migrations: migrations).migrate(client: db.client, logger: db.logger) == [])
            try await pipeline.drain()
            #expect(try await pipeline.count(.pending) == 0)
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM notifications") == 2)
            #expect(try await db.scalar("SELECT sum(delivery_count)::int8 FROM notifications") == 2)
        }
    }

    @Test func theNewRulesNeverWriteTheReasonTheMigrationLooksFor() async throws {
        // A Production notification that really lacks its appAppleId is still rejected, with a reason the old
        // pattern (and so a second upgrade or `storeledger requeue --rejected "wrongApp: the payload for '"`) never matches.
        let production = TestSigner(pki: Self.pki, environment: "Production")
        let token = try production.signedNotification(type: "TEST", signedDate: Date(), dataOverrides: ["appAppleId": NSNull()])
        let verifiers = try LedgerVerifiers(
            apps: [AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)], environmentsSetting: nil,
            trust: try TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER])
        )
        let error = await #expect(throws: VerificationError.self) { try await verifiers.verifyNotification(token) }
        #expect(error?.code == .wrongApp)
        #expect(error?.description.hasPrefix("wrongApp: the payload for '") == false)
        #expect(error?.description.hasSuffix("carries no appAppleId, required in Production") == false)
    }
}
