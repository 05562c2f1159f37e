import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("App API: seed 000's /api/v1/payments/appstore routes")
struct AppStorePaymentsTests {
    static let pki = try! TestPKI()
    static let transactionPath = "/api/v1/payments/appstore/transaction"

    @Test func aPostedTransactionIsLoggedVerifiedProjectedAndLinkedWhileTheCallerWaits() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws = try harness.subscription("5000", expiresIn: 7 * 86_400)
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["success"] as? Bool == true)
                #expect(json["is_premium"] as? Bool == true)
                let subscription = try #require(json["subscription"] as? [String: Any])
                #expect(subscription["product_id"] as? String == "com.example.storeledger.monthly")
                #expect(subscription["is_active"] as? Bool == true)
                #expect(subscription["environment"] as? String == "Sandbox")
                #expect((subscription["expires_date"] as? String)?.hasSuffix("Z") == true)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'client' AND user_id = 'alice'") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM event_queue WHERE state = 'done' AND attempts = 1") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions WHERE original_transaction_id = '5000' AND entitled") == 1)
            #expect(
                try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'alice' AND original_transaction_id = '5000'") == 1)
        }
    }

    /// While a rebuild's swap holds the read model (minutes on a large ledger), an app's post is turned away at once,
    /// 503 `rebuild_in_progress` with `Retry-After`, storing nothing, and goes through once the swap is over. Before, each
    /// post waited out the swap on one of the process's pooled connections, which the receiver shares: a few posts
    /// a second took them all, and Apple's notifications got 503 for as long as the swap lasted.
    @Test func aPostDuringARebuildsSwapIsTurnedAwayAtOnce() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws = try harness.subscription("5050", expiresIn: 7 * 86_400)
            let (swapHeld, holdSwap) = AsyncStream<Void>.makeStream()
            let (swapOver, endSwap) = AsyncStream<Void>.makeStream()
            defer { endSwap.finish() }
            // The swap's locks, held by another session until told.
            let swap = Task {
                try await db.client.inTransaction(logger: db.logger) { connection in
                    try await ShadowSchema.lockLiveTables(on: connection, logger: db.logger)
                    holdSwap.yield()
                    for await _ in swapOver { break }
                }
            }
            for await _ in swapHeld { break }
            try await harness.app.test(.router) { client in
                let started = ContinuousClock.now
                let refused = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                // At once: not after the transaction's 60 s lock wait (judged loosely: the suite's load slows everything).
                #expect(started.duration(to: .now) < .seconds(30))
                #expect(refused.status == .serviceUnavailable)
                #expect(refused.headers[.retryAfter] == "5")
                #expect(try AppAPIHarness.json(refused)["code"] as? String == "rebuild_in_progress")
                #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'client'") == 0)
                endSwap.yield()
                try await swap.value
                let accepted = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(accepted.status == .ok)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions WHERE original_transaction_id = '5050' AND entitled") == 1)
        }
    }

    @Test func postingTheSameTransactionAgainIsIdempotent() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws = try harness.subscription("5100")
            try await harness.app.test(.router) { client in
                var answers: [String] = []
                for _ in 0..<3 {
                    let response = try await client.execute(
                        uri: Self.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                        body: try AppAPIHarness.body(["signed_transaction": jws])
                    )
                    #expect(response.status == .ok)
                    answers.append(String(buffer: response.body))
                }
                #expect(Set(answers).count == 1)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 3)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_link_history") == 1)
        }
    }

    @Test(arguments: ["forged chain", "another app", "tampered payload", "not a JWS"])
    func aTransactionThatCannotVerifyIsRejectedKeptAndNeverProjected(_ kind: String) async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws: String
            switch kind {
            case "forged chain": jws = try harness.subscription("5200", signer: TestSigner(pki: try TestPKI()))
            case "another app": jws = try harness.subscription("5200", signer: TestSigner(pki: Self.pki, bundleID: "com.evil.app"))
            case "tampered payload":
                let parts = try harness.subscription("5200").split(separator: ".")
                let payload = harness.signer.transactionPayload(transactionID: "5200", productID: "com.example.storeledger.lifetime")
                let forged = try JSONSerialization.data(withJSONObject: payload).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
                jws = "\(parts[0]).\(forged).\(parts[2])"
            default: jws = "hello"
            }
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "mallory"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(response.status == .unprocessableContent)
                let json = try AppAPIHarness.json(response)
                #expect(json["code"] as? String == "invalid_signed_transaction")
                #expect((json["error"] as? String)?.isEmpty == false)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM event_queue WHERE state = 'rejected'") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links") == 0)
        }
    }

    @Test func anExpiredSubscriptionIsRecordedButNotPremium() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws = try harness.subscription("5300", expiresIn: -86_400)
            try await harness.app.test(.router) { client in
                let headers = try await AppAPIHarness.headers(user: "bob")
                let response = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: headers, body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["is_premium"] as? Bool == false)
                #expect((json["subscription"] as? [String: Any])?["is_active"] as? Bool == false)
                let status = try AppAPIHarness.json(try await client.execute(uri: "/api/v1/payments/appstore/status", method: .get, headers: headers))
                #expect(status["has_subscription"] as? Bool == false)
                #expect(status["status"] as? String == "expired")
                #expect(status["source"] as? String == "appstore")
                #expect(status["product_id"] as? String == "com.example.storeledger.monthly")
            }
        }
    }

    @Test func statusWithoutAnyPurchaseSaysNone() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: "/api/v1/payments/appstore/status", method: .get, headers: try await AppAPIHarness.headers(user: "nobody")
                )
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["has_subscription"] as? Bool == false)
                #expect(json["status"] as? String == "none")
            }
        }
    }

    @Test func restoreCountsWhatVerifiedAndAnswersTheActiveSubscription() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let forged = try harness.subscription("5499", signer: TestSigner(pki: try TestPKI()))
            let transactions = [try harness.subscription("5400", expiresIn: 3 * 86_400), try harness.nonConsumable("5401"), forged]
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: "/api/v1/payments/appstore/restore", method: .post, headers: try await AppAPIHarness.headers(user: "carol"),
                    body: try AppAPIHarness.body(["transactions": transactions])
                )
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["success"] as? Bool == true)
                #expect(json["restored_count"] as? Int == 2)
                #expect(json["rejected_count"] as? Int == 1)
                #expect(json["is_premium"] as? Bool == true)
                let active = try #require(json["active_subscription"] as? [String: Any])
                #expect(active["product_id"] as? String == "com.example.storeledger.monthly")
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'carol'") == 2)
            #expect(try await harness.count("SELECT count(*)::int8 FROM purchases WHERE transaction_id = '5401' AND entitled") == 1)
        }
    }

    @Test func aRestoreOfTheMostTransactionsAppleSizedFitsItsBodyAndALargerBodyIsA413() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            // Apple's signed transactions are about 6 kB (the certificate chain in each header): 200 of 7 kB are more
            // than the 1 MiB other bodies get. One verifies; the rest are refused one by one, not the whole body.
            let filler = String(repeating: "x", count: 7 * 1024)
            let transactions =
                [try harness.subscription("5600")] + Array(repeating: filler, count: AppStorePaymentsController.maximumRestoreCount - 1)
            let body = try AppAPIHarness.body(["transactions": transactions])
            #expect(body.readableBytes > JSONBody.maximumSize)
            try await harness.app.test(.router) { client in
                let headers = try await AppAPIHarness.headers(user: "dana")
                let response = try await client.execute(uri: "/api/v1/payments/appstore/restore", method: .post, headers: headers, body: body)
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["restored_count"] as? Int == 1)
                #expect(json["rejected_count"] as? Int == AppStorePaymentsController.maximumRestoreCount - 1)
                #expect(json["is_premium"] as? Bool == true)

                // One element larger than a transaction can be is refused unread: counted, not logged.
                let oversized = String(repeating: "x", count: AppStorePaymentsController.maximumRestoreTransactionBytes + 1)
                let mixed = try AppAPIHarness.json(
                    try await client.execute(
                        uri: "/api/v1/payments/appstore/restore", method: .post, headers: headers,
                        body: try AppAPIHarness.body(["transactions": [try harness.subscription("5601"), oversized]])))
                #expect(mixed["restored_count"] as? Int == 1)
                #expect(mixed["rejected_count"] as? Int == 1)
                #expect(
                    try await harness.count(
                        "SELECT count(*)::int8 FROM events WHERE length(body) > \(AppStorePaymentsController.maximumRestoreTransactionBytes)") == 0)

                let tooLarge = try AppAPIHarness.body([
                    "transactions": [String(repeating: "x", count: AppStorePaymentsController.maximumRestoreBytes)]
                ])
                let refused = try await client.execute(uri: "/api/v1/payments/appstore/restore", method: .post, headers: headers, body: tooLarge)
                #expect(refused.status == .contentTooLarge)
                #expect(try AppAPIHarness.json(refused)["code"] as? String == "payload_too_large")
            }
        }
    }

    @Test func aSecondUserRestoringThePurchaseTakesItOverAndTheTransferIsRecorded() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let jws = try harness.subscription("5500")
            try await harness.app.test(.router) { client in
                let alice = try await AppAPIHarness.headers(user: "alice")
                let bob = try await AppAPIHarness.headers(user: "bob")
                _ = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: alice, body: try AppAPIHarness.body(["signed_transaction": jws]))
                let restore = try await client.execute(
                    uri: "/api/v1/payments/appstore/restore", method: .post, headers: bob, body: try AppAPIHarness.body(["transactions": [jws]])
                )
                #expect(try AppAPIHarness.json(restore)["is_premium"] as? Bool == true)
                let aliceStatus = try AppAPIHarness.json(
                    try await client.execute(uri: "/api/v1/payments/appstore/status", method: .get, headers: alice))
                #expect(aliceStatus["has_subscription"] as? Bool == false)
                let bobStatus = try AppAPIHarness.json(try await client.execute(uri: "/api/v1/payments/appstore/status", method: .get, headers: bob))
                #expect(bobStatus["has_subscription"] as? Bool == true)
            }
            let history = try await UserLinkStore.history(environment: "Sandbox", originalTransactionID: "5500", client: db.client, logger: db.logger)
            #expect(history.map(\.change) == ["linked", "transferred"])
            #expect(history.last?.from == "alice")
            #expect(history.last?.to == "bob")
            // The transfer is rebuildable from the log: the claiming event carries the claimant.
            #expect(
                try await harness.count(
                    "SELECT count(*)::int8 FROM events e JOIN user_link_history h ON h.event_id = e.id WHERE e.user_id = h.to_user_id") == 2)
        }
    }

    /// The app API over `db` with an active webhook endpoint, and the headers of signed-in users alice and bob.
    static func hookedHarness(_ db: TestDatabase) async throws -> (AppAPIHarness, alice: HTTPFields, bob: HTTPFields) {
        let harness = try await AppAPIHarness(db, pki: Self.pki)
        _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/a", logger: db.logger)
        return (harness, try await AppAPIHarness.headers(user: "alice"), try await AppAPIHarness.headers(user: "bob"))
    }

    /// Waits (10 s at most) until `count` requests for advisory locks of this database wait; whether they did.
    static func untilWaitingForAdvisoryLocks(_ db: TestDatabase, count: Int) async throws -> Bool {
        try await eventually(within: .seconds(10), every: .milliseconds(10)) {
            try await db.scalar(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ) == count
        }
    }

    /// Locks the link of Sandbox purchase `original`, as an app's post does when it links after projecting.
    static func lockLink(original: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "SELECT user_id FROM user_links WHERE environment = 'Sandbox' AND original_transaction_id = \(original) FOR UPDATE", logger: logger
        ).readToEnd()
    }

    /// A host that grants access from webhooks hears who holds a purchase: its first owner (`subscription.linked`) and
    /// each transfer (`subscription.transferred`, with the owner who no longer has it). The row's projection announces
    /// only what Apple's facts change, so before, a restore on another account said nothing to the host.
    @Test func linksAndTransfersAreAnnouncedToWebhooks() async throws {
        try await TestDatabase.withFresh { db in
            let (harness, alice, bob) = try await Self.hookedHarness(db)
            let jws = try harness.subscription("5600")
            try await harness.app.test(.router) { client in
                for (headers, path, body) in [
                    (alice, Self.transactionPath, try AppAPIHarness.body(["signed_transaction": jws])),
                    (alice, Self.transactionPath, try AppAPIHarness.body(["signed_transaction": jws])),  // unchanged: nothing
                    (bob, "/api/v1/payments/appstore/restore", try AppAPIHarness.body(["transactions": [jws]])),
                ] {
                    let response = try await client.execute(uri: path, method: .post, headers: headers, body: body)
                    #expect(response.status == .ok)
                }
            }
            let rows = try await db.client.query(
                """
                SELECT type || ' ' || coalesce(user_id, '-') || ' ' || coalesce(payload->>'previous_user_id', '-') || ' ' || entitled::text
                       || ' ' || original_transaction_id
                FROM webhook_events WHERE type LIKE '%.linked' OR type LIKE '%.transferred' ORDER BY created_at, occurred_at
                """, logger: db.logger
            ).decode(String.self).readToEnd()
            #expect(rows == ["subscription.linked alice - true 5600", "subscription.transferred bob alice true 5600"])
            let events = try await db.scalar("SELECT count(*) FROM webhook_events")
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries") == events)
        }
    }

    /// A token's first claim gives its owner every purchase carrying it that has no link of its own (`entitlements_at`),
    /// and says so to webhooks: a purchase Apple told of first (here a lookup answered by Apple's API, no user) is
    /// `<kind>.linked` to the user whose app posted another purchase with the same token. Later posts announce nothing
    /// more.
    @Test func aTokensFirstClaimAnnouncesThePurchasesItGivesItsOwner() async throws {
        try await TestDatabase.withFresh { db in
            let (harness, alice, _) = try await Self.hookedHarness(db)
            let token = UUID().uuidString
            let earlier = try await harness.dependencies.intake.submit(
                signedTransaction: try harness.nonConsumable("5900", token: token), source: .serverAPI, user: nil, origin: .init(),
                logger: db.logger)
            var accepted = false
            if case .accepted = earlier { accepted = true }
            #expect(accepted)
            let posted = try AppAPIHarness.body(["signed_transaction": try harness.subscription("5901", token: token)])
            try await harness.app.test(.router) { client in
                for _ in 0..<2 {
                    let response = try await client.execute(uri: Self.transactionPath, method: .post, headers: alice, body: posted)
                    #expect(response.status == .ok)
                }
            }
            let rows = try await db.client.query(
                """
                SELECT type || ' ' || coalesce(user_id, '-') || ' ' || original_transaction_id || ' ' || entitled::text
                FROM webhook_events WHERE type LIKE '%.linked' ORDER BY sequence
                """, logger: db.logger
            ).decode(String.self).readToEnd()
            #expect(rows == ["subscription.linked alice 5901 true", "purchase.linked alice 5900 true"])
        }
    }

    /// A transfer announced while another projection of the same row has not committed waits for it (the row's lock)
    /// and carries what it wrote: otherwise the transfer, sequenced after that event, would carry the older row. The
    /// restore takes the row's lock before its link's, as a projection does (an app's post: the row, then `user_links`),
    /// so the two never deadlock.
    @Test func aTransferWaitsForAProjectionOfItsRowInProgress() async throws {
        try await TestDatabase.withFresh { db in
            let (harness, alice, bob) = try await Self.hookedHarness(db)
            let jws = try harness.subscription("5700")
            try await harness.app.test(.router) { client in
                _ = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: alice, body: try AppAPIHarness.body(["signed_transaction": jws]))
                let locked = AnsweredFlag()
                let release = AnsweredFlag()
                // The worker: the row's lock, its new period written, not committed yet.
                async let worker: Void = db.client.inTransaction(logger: db.logger) { connection in
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(hashtextextended('subscription/Sandbox/5700', 0))", logger: db.logger
                    ).readToEnd()
                    try await connection.query(
                        """
                        UPDATE subscriptions SET expires_at = expires_at + interval '30 days'
                        WHERE environment = 'Sandbox' AND original_transaction_id = '5700'
                        """, logger: db.logger
                    ).readToEnd()
                    locked.set()
                    for _ in 0..<1_000 where !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
                    // Then its link, as an app's post links after projecting: the restore must not hold it.
                    try await Self.lockLink(original: "5700", on: connection, logger: db.logger)
                }
                #expect(try await eventually(within: .seconds(10), every: .milliseconds(5)) { locked.isSet })
                async let restored = client.execute(
                    uri: "/api/v1/payments/appstore/restore", method: .post, headers: bob, body: try AppAPIHarness.body(["transactions": [jws]]))
                // The restore waits for the row's lock.
                let waiting = try await Self.untilWaitingForAdvisoryLocks(db, count: 1)
                #expect(waiting)
                release.set()
                try await worker
                #expect(try await restored.status == .ok)
            }
            #expect(
                try await db.scalar(
                    """
                    SELECT count(*) FROM webhook_events e JOIN subscriptions s USING (environment, original_transaction_id)
                    WHERE e.type = 'subscription.transferred' AND e.expires_at = s.expires_at
                    """) == 1)
        }
    }

    /// A purchase's rows stand or fall together (a restore on another device is a transaction of its own), but each
    /// row has its own lock: the event of a restored copy posted while a refund of the purchase is being projected
    /// waits for it (the purchase's lock in the outbox), so it is sequenced after the refund's and carries what the
    /// refund wrote. Before, it could say `entitled: true` after the refund's `false`.
    @Test func aRestoredCopyPostedDuringARefundOfItsPurchaseIsAnnouncedAfterIt() async throws {
        try await TestDatabase.withFresh { db in
            let (harness, alice, _) = try await Self.hookedHarness(db)
            try await harness.app.test(.router) { client in
                let bought = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: alice,
                    body: try AppAPIHarness.body(["signed_transaction": try harness.nonConsumable("5800")]))
                #expect(bought.status == .ok)
                let refunding = AnsweredFlag()
                let release = AnsweredFlag()
                // The worker projecting Apple's REFUND: the row's lock, the row revoked, its event enqueued, not committed.
                async let worker: Void = db.client.inTransaction(logger: db.logger) { connection in
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(hashtextextended('purchase/Sandbox/5800', 0))", logger: db.logger
                    ).readToEnd()
                    try await connection.query(
                        "UPDATE purchases SET entitled = false, revoked_at = now() WHERE environment = 'Sandbox' AND transaction_id = '5800'",
                        logger: db.logger
                    ).readToEnd()
                    let refunded = WebhookEvent(
                        type: "purchase.refunded", appAccountToken: nil, productID: "com.example.storeledger.unlock", environment: "Sandbox",
                        originalTransactionID: "5800", transactionID: "5800", entitled: false, expiresAt: nil, occurredAt: Date())
                    try await WebhookOutbox.enqueue([refunded], on: connection, logger: db.logger)
                    refunding.set()
                    for _ in 0..<1_000 where !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
                }
                #expect(try await eventually(within: .seconds(10), every: .milliseconds(5)) { refunding.isSet })
                async let restored = client.execute(
                    uri: Self.transactionPath, method: .post, headers: alice,
                    body: try AppAPIHarness.body(["signed_transaction": try harness.nonConsumable("5801", original: "5800")]))
                let waiting = try await Self.untilWaitingForAdvisoryLocks(db, count: 1)
                #expect(waiting)
                release.set()
                try await worker
                #expect(try await restored.status == .ok)
            }
            let events = try await db.client.query(
                "SELECT type || ' ' || coalesce(transaction_id, '-') || ' ' || entitled::text FROM webhook_events ORDER BY sequence",
                logger: db.logger
            ).decode(String.self).readToEnd()
            #expect(
                events == [
                    "purchase.purchased 5800 true", "purchase.linked 5800 true", "purchase.refunded 5800 false",
                    "purchase.purchased 5801 false",
                ])
        }
    }

    /// Every transaction takes a purchase's locks in one order: its row, the purchase's, then `user_links`. A restore
    /// that projected nothing (a known transaction, its owner changed) once took the link's lock before the purchase's,
    /// and a post of the purchase's restored copy, holding the purchase's lock from its projection, then waited for
    /// the link: a deadlock, one of the two aborted.
    @Test func aRestoreAndAPostOfTheRestoredCopyNeverDeadlock() async throws {
        try await TestDatabase.withFresh { db in
            let (harness, alice, bob) = try await Self.hookedHarness(db)
            let purchase = try harness.nonConsumable("5820")
            try await harness.app.test(.router) { client in
                let bought = try await client.execute(
                    uri: Self.transactionPath, method: .post, headers: alice, body: try AppAPIHarness.body(["signed_transaction": purchase]))
                #expect(bought.status == .ok)
                let holding = AnsweredFlag()
                let release = AnsweredFlag()
                // Alice's post of the restored copy: projected (the purchase's lock held by its event), linking next.
                async let copy: Void = db.client.inTransaction(logger: db.logger) { connection in
                    let purchased = WebhookEvent(
                        type: "purchase.purchased", appAccountToken: nil, productID: "com.example.storeledger.unlock", environment: "Sandbox",
                        originalTransactionID: "5820", transactionID: "5821", entitled: true, expiresAt: nil, occurredAt: Date())
                    try await WebhookOutbox.enqueue([purchased], on: connection, logger: db.logger)
                    holding.set()
                    for _ in 0..<1_000 where !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
                    try await Self.lockLink(original: "5820", on: connection, logger: db.logger)
                }
                #expect(try await eventually(within: .seconds(10), every: .milliseconds(5)) { holding.isSet })
                // Bob restores the purchase itself: known, so it projects nothing, and transfers it.
                async let restored = client.execute(
                    uri: "/api/v1/payments/appstore/restore", method: .post, headers: bob, body: try AppAPIHarness.body(["transactions": [purchase]]))
                let waiting = try await Self.untilWaitingForAdvisoryLocks(db, count: 1)
                #expect(waiting)
                release.set()
                try await copy
                #expect(try await restored.status == .ok)
            }
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE type = 'purchase.transferred' AND user_id = 'bob'") == 1)
        }
    }

    /// A token claimed by two users at once is the first one's: the second waits for the first's claim (the token's
    /// lock) and then reads it, where its insert's conflict once returned nothing and the code took its own user.
    /// An event carrying the token, enqueued meanwhile, waits too, and names the owner the claim recorded (before, null).
    @Test func aClaimInProgressDecidesConcurrentClaimsAndTheOwnerEventsName() async throws {
        try await TestDatabase.withFresh { db in
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/a", logger: db.logger)
            let token = UUID().uuidString.lowercased()
            let claiming = AnsweredFlag()
            let release = AnsweredFlag()
            async let first = db.client.inTransaction(logger: db.logger) { connection in
                let claim = try await UserLinkStore.claimToken(token, for: UserID("alice"), origin: "client", on: connection, logger: db.logger)
                claiming.set()
                for _ in 0..<1_000 where !release.isSet { try await Task.sleep(for: .milliseconds(10)) }
                return claim.claimed
            }
            #expect(try await eventually(within: .seconds(10), every: .milliseconds(5)) { claiming.isSet })
            async let second = db.client.inTransaction(logger: db.logger) { connection in
                try await UserLinkStore.claimToken(token.uppercased(), for: UserID("bob"), origin: "client", on: connection, logger: db.logger)
            }
            async let announced: Void = db.client.inTransaction(logger: db.logger) { connection in
                let started = WebhookEvent(
                    type: "subscription.started", appAccountToken: token.uppercased(), productID: "com.example.storeledger.monthly",
                    environment: "Sandbox", originalTransactionID: "5830", transactionID: "5830", entitled: true, expiresAt: nil,
                    occurredAt: Date())
                try await WebhookOutbox.enqueue([started], on: connection, logger: db.logger)
            }
            let waiting = try await Self.untilWaitingForAdvisoryLocks(db, count: 2)
            #expect(waiting)
            release.set()
            #expect(try await first)
            let rival = try await second
            #expect(rival.owner == UserID("alice") && !rival.claimed)
            try await announced
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events WHERE type = 'subscription.started' AND user_id = 'alice'") == 1)
        }
    }

    @Test func badBodiesGetAClearJSONError() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let headers = try await AppAPIHarness.headers(user: "alice")
                for body in ["{}", "not json", #"{"signed_transaction": 42}"#] {
                    let response = try await client.execute(
                        uri: Self.transactionPath, method: .post, headers: headers, body: ByteBuffer(string: body))
                    #expect(response.status == .badRequest)
                    #expect(try AppAPIHarness.json(response)["code"] as? String == "invalid_request")
                }
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 0)
        }
    }
}
