import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

@Suite("Ledger handler: verify → record facts → project")
struct LedgerHandlerTests {
    static let pki = try! TestPKI()

    @Test func aLifecycleIsProjectedIntoTheSubscriptionsRow() async throws {
        let lifecycle = SubscriptionLifecycles.renewThenExpire()
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(lifecycle.facts)
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == lifecycle.facts.count)
            let row = try #require(try await pipeline.subscription("1000"))
            #expect(row["status"] as? String == "expired")
            #expect(row["entitled"] as? Bool == false)
            #expect(row["auto_renew"] as? Bool == false)
            #expect(row["product_id"] as? String == "com.example.monthly")
            #expect(row["bundle_id"] as? String == "com.example.app")
            #expect(row["expiration_intent"] as? Int == 1)
            let expected = try #require(SubscriptionProjection.fold(lifecycle.facts))
            let expires = try #require(expected.expiresAt)
            let stored = try await db.scalar("SELECT (extract(epoch FROM expires_at) * 1000)::bigint FROM subscriptions")
            #expect(Int64(stored) == Int64(expires.millisecondsSince1970))
        }
    }

    @Test func duringGraceTheSubscriptionIsEntitledAndInBillingRetryItIsNot() async throws {
        var lifecycle = SubscriptionLifecycleBuilder(originalTransactionID: "3000")
        lifecycle.subscribe()
        lifecycle.failToRenew(gracePeriod: 16 * 86_400_000)
        let inGrace = lifecycle.facts
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(inGrace)
            try await pipeline.drain()
            let row = try #require(try await pipeline.subscription("3000"))
            #expect(row["status"] as? String == "grace_period")
            #expect(row["entitled"] as? Bool == true)
            #expect(row["grace_period_expires_at"] != nil && !(row["grace_period_expires_at"] is NSNull))
        }
        lifecycle.gracePeriodExpired()
        let afterGrace = lifecycle.facts
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(afterGrace)
            try await pipeline.drain()
            let row = try #require(try await pipeline.subscription("3000"))
            #expect(row["status"] as? String == "billing_retry")
            #expect(row["entitled"] as? Bool == false)
        }
    }

    /// Property: the read model is a function of the set of facts, whatever the arrival order,
    /// however often Apple retries, and however the work is batched; a rebuild from the recorded
    /// facts gives the same rows.
    @Test(arguments: SubscriptionLifecycles.all(includesStatus: true).map(\.name))
    func arrivalOrderDuplicatesAndRebuildGiveIdenticalRows(_ name: String) async throws {
        let lifecycle = try #require(SubscriptionLifecycles.all(includesStatus: true).first { $0.name == name })
        let facts = lifecycle.builder.facts
        let inOrder = try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(facts)
            try await pipeline.drain(batchSize: 1)
            return try await pipeline.readModel()
        }
        #expect(!inOrder.isEmpty)
        let seed = FactPermutations.baseSeed ^ lifecycle.salt
        var rng = SplitMix64(seed: seed)
        for round in 0..<3 {
            let permuted = FactPermutations.shuffledWithDuplicates(facts, using: &rng)
            let batchSize = [1, 4, 50][round]
            let (live, rebuilt) = try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                try await pipeline.append(permuted)
                try await pipeline.drain(batchSize: batchSize)
                let live = try await pipeline.readModel()
                // Rebuild: drop the read model and refold every row from the recorded facts.
                try await db.client.inTransaction(logger: db.logger) { connection in
                    try await connection.query("DELETE FROM subscriptions", logger: db.logger)
                    try await connection.query("DELETE FROM purchases", logger: db.logger)
                    try await LedgerHandler.project(
                        subscriptions: Set(facts.compactMap(\.subscriptionKey)), purchases: Set(facts.compactMap(\.purchaseKey)),
                        factCache: DecodedFactCache(), on: connection, logger: db.logger
                    )
                }
                return (live, try await pipeline.readModel())
            }
            #expect(live == inOrder, "seed \(seed) round \(round)")
            #expect(rebuilt == inOrder, "seed \(seed) round \(round)")
        }
    }

    @Test func oneTimePurchasesAreProjectedWithRevocation() async throws {
        let purchases = PurchaseLifecycles.all()
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(purchases.facts.reversed())
            try await pipeline.drain()
            let expected = PurchaseProjection.foldAll(purchases.facts)
            #expect(try await db.scalar("SELECT count(*) FROM purchases") == expected.count)
            for (key, state) in expected {
                let entitled = try await db.scalar(
                    "SELECT entitled::int FROM purchases WHERE environment = \(key.environment.rawValue) AND transaction_id = \(key.transactionID.rawValue)"
                )
                #expect((entitled == 1) == state.entitled, "\(key)")
                let revoked = try await db.scalar(
                    "SELECT (revoked_at IS NOT NULL)::int FROM purchases WHERE environment = \(key.environment.rawValue) AND transaction_id = \(key.transactionID.rawValue)"
                )
                #expect((revoked == 1) == (state.revokedAt != nil), "\(key)")
            }
        }
    }

    @Test func retriesInsideOneClaimedBatchAreCountedAndAppliedOnce() async throws {
        var lifecycle = SubscriptionLifecycleBuilder(originalTransactionID: "4100")
        lifecycle.subscribe()
        let fact = try #require(lifecycle.facts.first)
        try await TestDatabase.withFresh { db in
            let single = try LedgerPipeline(db, pki: Self.pki)
            let event = try single.signer.signedEvent(for: fact)
            var ids: [Int64] = []
            for _ in 0..<3 { ids.append(try await single.append(source: event.source, body: event.body).rawValue) }
            try await single.drain(batchSize: 10)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 3)
            let rows = try await db.client.query(
                "SELECT delivery_count, first_event_id, last_event_id FROM notifications", logger: db.logger
            )
            var seen = 0
            for try await (deliveries, firstID, lastID) in rows.decode((Int32, Int64, Int64).self) {
                seen += 1
                #expect(deliveries == 3)
                #expect(firstID == ids.min())
                #expect(lastID == ids.max())
            }
            #expect(seen == 1)
            #expect(try await db.scalar("SELECT count(*) FROM notification_deliveries") == 3)
            #expect(try await db.scalar("SELECT count(*) FROM transactions") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions WHERE original_transaction_id = '4100'") == 1)
        }
    }

    @Test func appleRetriesAreDeliveriesOfOneNotificationAppliedOnce() async throws {
        var lifecycle = SubscriptionLifecycleBuilder(originalTransactionID: "4000")
        lifecycle.subscribe()
        let fact = try #require(lifecycle.facts.first)
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let event = try pipeline.signer.signedEvent(for: fact)
            let first = try await pipeline.append(source: event.source, body: event.body)
            try await pipeline.drain()
            let before = try await pipeline.readModel()
            let second = try await pipeline.append(source: event.source, body: event.body)
            try await pipeline.drain()
            #expect(try await pipeline.readModel() == before)
            let rows = try await db.client.query(
                "SELECT delivery_count, first_event_id, last_event_id, notification_type FROM notifications", logger: db.logger
            )
            var seen = 0
            for try await (deliveries, firstID, lastID, type) in rows.decode((Int32, Int64, Int64, String).self) {
                seen += 1
                #expect(deliveries == 2)
                #expect(firstID == first.rawValue)
                #expect(lastID == second.rawValue)
                #expect(type == "SUBSCRIBED")
            }
            #expect(seen == 1)
            #expect(try await db.scalar("SELECT count(*) FROM notification_deliveries") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM transactions WHERE NOT standalone") == 1)
        }
    }

    @Test func aNotificationIsStoredWithItsNestedSignedDataDecodedOnlyAndReadsBackAsTheSameFact() async throws {
        var lifecycle = SubscriptionLifecycleBuilder(originalTransactionID: "4300")
        lifecycle.subscribe()
        let fact = try #require(lifecycle.facts.first)
        let key = try #require(fact.subscriptionKey)
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append([fact])
            try await pipeline.drain()
            // The JWS texts are in the event log, byte for byte, and only decoded in the facts.
            let bodies = try await db.client.query("SELECT convert_from(body, 'UTF8') FROM events", logger: db.logger)
            for try await body in bodies.decode(String.self) {
                let envelope = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
                let jws = try #require(envelope?["signedPayload"] as? String)
                var claims = String(jws.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
                    .replacingOccurrences(of: "_", with: "/")
                claims += String(repeating: "=", count: (4 - claims.count % 4) % 4)
                let payload = String(decoding: try #require(Data(base64Encoded: claims)), as: UTF8.self)
                #expect(payload.contains("\"signedTransactionInfo\":\"ey") && payload.contains("\"signedRenewalInfo\":\"ey"))
            }
            #expect(
                try await db.scalar("SELECT count(*) FROM notifications WHERE transaction_payload IS NOT NULL AND renewal_payload IS NOT NULL") == 1)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM notifications WHERE payload -> 'data' ?| ARRAY['signedTransactionInfo', 'signedRenewalInfo']"
                ) == 0)
            #expect(try await db.scalar("SELECT count(*) FROM notifications WHERE payload #>> '{data,bundleId}' = 'com.example.app'") == 1)
            let stored = try await db.client.withConnection { connection in
                try await FactStore.subscriptionFacts([key], on: connection, cache: pipeline.handler.factCache, logger: db.logger)
            }
            #expect(stored[key] == [fact])
            // Without a digest the row is fetched and decoded from its stored JSON, never taken from the cache.
            try await db.client.query("UPDATE notifications SET fact_sha256 = NULL", logger: db.logger)
            let decoded = try await db.client.withConnection { connection in
                try await FactStore.subscriptionFacts([key], on: connection, cache: pipeline.handler.factCache, logger: db.logger)
            }
            #expect(decoded[key] == [fact])
        }
    }

    /// The worker sends a notification's payload without its nested JWS texts (read in Apple's plain shape): the stored
    /// `notifications.payload` must be exactly what PostgreSQL made of the whole payload before
    /// (`payload::jsonb #- '{data,signedTransactionInfo}' #- '{data,signedRenewalInfo}'`), its digest that of the signing
    /// input the signature covers (header and whole payload, as received), and the event log's bodies untouched, byte
    /// for byte.
    @Test func aNotificationStoredFromItsTextWithoutNestedJWSIsTheRowTheWholeTextGave() async throws {
        let facts = SubscriptionLifecycles.upgradeRefundReversed().facts + SubscriptionLifecycles.renewThenExpire().facts
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(facts)
            func bodies() async throws -> [(Int64, ByteBuffer)] {
                var rows: [(Int64, ByteBuffer)] = []
                for try await row in try await db.client.query("SELECT id, body FROM events ORDER BY id", logger: db.logger)
                    .decode((Int64, ByteBuffer).self)
                { rows.append(row) }
                return rows
            }
            let bodiesBefore = try await bodies()
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == facts.count)
            let bodiesAfter = try await bodies()
            #expect(bodiesAfter.map(\.0) == bodiesBefore.map(\.0) && bodiesAfter.map(\.1) == bodiesBefore.map(\.1))
            var compared = 0
            for (_, body) in bodiesAfter {
                // Standalone signed data (an app posting a transaction) has no notification row.
                guard let envelope = try? NotificationEnvelope.parse(body.readableBytesView) else { continue }
                var segment = String(envelope.signedPayload.split(separator: ".")[1]).replacingOccurrences(of: "-", with: "+")
                    .replacingOccurrences(of: "_", with: "/")
                segment += String(repeating: "=", count: (4 - segment.count % 4) % 4)
                let payload = try #require(Data(base64Encoded: segment))
                let uuid = try #require(try JSONDecoder().decode(NotificationPayload.self, from: payload).notificationUUID?.rawValue)
                let text = String(decoding: payload, as: UTF8.self)
                // The content digest is that of what the signature covers: `header.payload` as received.
                let signingInput = String(envelope.signedPayload[..<envelope.signedPayload.lastIndex(of: ".")!])
                #expect(try NotificationPayload.decodeStrippingNestedJWS(json: payload).withoutNestedJWS != nil)
                let same = try await db.scalar(
                    """
                    SELECT count(*) FROM notifications
                    WHERE notification_uuid = \(uuid)
                      AND payload = \(text)::jsonb #- '{data,signedTransactionInfo}' #- '{data,signedRenewalInfo}'
                      AND fact_sha256 = sha256(convert_to(\(signingInput), 'UTF8'))
                    """)
                #expect(same == 1, "\(uuid)")
                compared += 1
            }
            #expect(compared == facts.filter { if case .notification = $0 { true } else { false } }.count && compared >= 5)
            // Apple's sample notification: the text without its nested JWS is, as jsonb, what `#-` leaves of the whole.
            let sample = try AppleSampleModels.data(named: "signedNotification")
            let without = try #require(try NotificationPayload.decodeStrippingNestedJWS(json: sample).withoutNestedJWS)
            let (whole, stripped) = (String(decoding: sample, as: UTF8.self), String(decoding: without, as: UTF8.self))
            #expect(
                try await db.scalar(
                    "SELECT count(*) WHERE \(stripped)::jsonb = \(whole)::jsonb #- '{data,signedTransactionInfo}' #- '{data,signedRenewalInfo}'"
                ) == 1)
        }
    }

    @Test func notificationsRecordedBeforeDigestsAreReadInFull() async throws {
        let facts = SubscriptionLifecycles.renewThenExpire().facts
        let half = facts.count / 2
        let expected = try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(facts)
            try await pipeline.drain()
            return try await pipeline.readModel()
        }
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append(Array(facts.prefix(half)))
            try await pipeline.drain()
            // As if recorded before migration 0010: no digest.
            let undigested = try await db.scalar("WITH u AS (UPDATE notifications SET fact_sha256 = NULL RETURNING 1) SELECT count(*) FROM u")
            #expect(undigested > 0)
            try await pipeline.append(Array(facts.dropFirst(half)))
            try await pipeline.drain()
            #expect(try await db.scalar("SELECT count(*) FROM notifications WHERE fact_sha256 IS NULL") == undigested)
            #expect(try await pipeline.readModel() == expected)
        }
    }

    @Test func aStandaloneTransactionPostedByAnAppIsProjected() async throws {
        var lifecycle = SubscriptionLifecycleBuilder(originalTransactionID: "5000")
        lifecycle.subscribe()
        lifecycle.appPostsCurrentTransaction()
        let posted = try #require(lifecycle.facts.last)
        guard case .transaction = posted else {
            Issue.record("expected a transaction fact")
            return
        }
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            try await pipeline.append([posted])
            try await pipeline.drain()
            let row = try #require(try await pipeline.subscription("5000"))
            #expect(row["status"] as? String == "active")
            #expect(row["entitled"] as? Bool == true)
            #expect(try await db.scalar("SELECT count(*) FROM transactions WHERE standalone") == 1)
        }
    }

    @Test func applesOwnTestNotificationIsRecordedWithoutProjecting() async throws {
        let vector = try String(
            contentsOf: try #require(Bundle.module.url(forResource: "Fixtures/apple/mock_signed_data/testNotification", withExtension: nil)),
            encoding: .utf8)
        let root = try Data(contentsOf: try #require(Bundle.module.url(forResource: "Fixtures/apple/certs/testCA", withExtension: "der")))
        try await TestDatabase.withFresh { db in
            let handler = LedgerHandler(
                verifiers: try LedgerVerifiers(
                    apps: [AppIdentity(bundleID: "com.example", appAppleID: 1234)], environments: [.sandbox],
                    trust: try TrustConfiguration(rootCertificatesDER: [root])
                ))
            _ = try await EventLog(client: db.client).append(
                NewEvent(
                    source: .appleNotification,
                    body: .init(string: #"{"signedPayload":"\#(vector.trimmingCharacters(in: .whitespacesAndNewlines))"}"#)),
                logger: db.logger
            )
            let batch = try await EventQueue(client: db.client).claim(limit: 1, owner: "t", lease: .seconds(30), logger: db.logger)
            let prepared = await handler.prepare(batch[0], logger: db.logger)
            let outcomes = try await db.client.inTransaction(logger: db.logger) { try await handler.apply([prepared], in: $0, logger: db.logger) }
            #expect(outcomes == [.done])
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM notifications WHERE notification_type = 'TEST' AND notification_uuid = '9ad56bd2-0bc6-42e0-af24-fd996d87a1e6' AND app_apple_id = 1234"
                ) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 0)
        }
    }
}
