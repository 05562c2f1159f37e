import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

@Suite("Outgoing webhooks: outbox in the projection's transaction, signed delivery with retries")
struct WebhookTests {
    static let pki = try! TestPKI()

    /// Appends and processes the facts one at a time, in order, as Apple would deliver them.
    func playInOrder(_ facts: [LedgerFact], pipeline: LedgerPipeline) async throws {
        for fact in facts.sorted(by: { $0.sortKey < $1.sortKey }) {
            try await pipeline.append([fact])
            try await pipeline.drain()
        }
    }

    func types(_ db: TestDatabase) async throws -> [String] {
        var types: [String] = []
        for try await type in try await db.client.query("SELECT type FROM webhook_events ORDER BY occurred_at, created_at", logger: db.logger).decode(
            String.self)
        {
            types.append(type)
        }
        return types
    }

    /// Adding an endpoint that is already active keeps its secret (its consumer holds it) unless asked to rotate it;
    /// the scheme's case does not make another endpoint.
    @Test func anActiveEndpointKeepsItsSecretUnlessRotated() async throws {
        try await TestDatabase.withFresh { db in
            let endpoints = WebhookEndpoints(client: db.client)
            let first = try #require(try await endpoints.add(url: "HTTPS://hooks.example.com/a", logger: db.logger))
            #expect(try await endpoints.add(url: "https://hooks.example.com/a", logger: db.logger) == nil)
            #expect(
                try await db.scalar("SELECT count(*) FROM webhook_endpoints WHERE url = 'https://hooks.example.com/a' AND secret = \(first)") == 1)
            let rotated = try #require(try await endpoints.add(url: "https://hooks.example.com/a", rotatingSecret: true, logger: db.logger))
            #expect(rotated != first)
            #expect(try await endpoints.remove(url: "Https://hooks.example.com/a", logger: db.logger))
            // A removed endpoint added again is active with a new secret.
            #expect(try await endpoints.add(url: "https://hooks.example.com/a", logger: db.logger) != nil)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_endpoints") == 1)
        }
    }

    @Test func entitlementChangesBecomeEventsOnlyWhenAnEndpointIsConfiguredAndReplaysAddNone() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let lifecycle = SubscriptionLifecycles.renewThenExpire()
            try await playInOrder(Array(lifecycle.facts.sorted { $0.sortKey < $1.sortKey }.prefix(2)), pipeline: pipeline)
            #expect(try await types(db).isEmpty)
            _ = try await WebhookEndpoints(client: db.client).add(url: "http://127.0.0.1:9/hook", logger: db.logger)
            try await playInOrder(Array(lifecycle.facts.sorted { $0.sortKey < $1.sortKey }.dropFirst(2)), pipeline: pipeline)
            let seen = try await types(db)
            #expect(seen.contains("subscription.renewed"))
            #expect(seen.last == "subscription.expired")
            #expect(seen.allSatisfy { $0.hasPrefix("subscription.") })
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries") == seen.count)
            // Replaying everything (same facts) detects no change: no new events.
            try await OperatorStore(client: db.client).requeue(.idRange(1...1000), action: "replay", by: "test", reason: "replay", logger: db.logger)
            try await pipeline.drain()
            #expect(try await types(db) == seen)
            // A rebuild writes its shadow silently.
            _ = try await Rebuilder(client: db.client, handler: pipeline.handler).run(dryRun: false, logger: db.logger)
            #expect(try await types(db) == seen)
        }
    }

    @Test func aRefundAndAOneTimePurchaseAreEvents() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            _ = try await WebhookEndpoints(client: db.client).add(url: "http://127.0.0.1:9/hook", logger: db.logger)
            try await playInOrder(SubscriptionLifecycles.upgradeRefundReversed().facts + PurchaseLifecycles.all().facts, pipeline: pipeline)
            let seen = Set(try await types(db))
            // buy → upgrade → refund → refund reversed; and the one-time purchases' own refunds and revocations.
            #expect(
                seen == [
                    "subscription.started", "subscription.product_changed", "subscription.refunded", "subscription.refund_reversed",
                    "purchase.purchased", "purchase.refunded", "purchase.refund_reversed", "purchase.revoked",
                ])
        }
    }

    /// `expires_at` is the period's end; `ends_at` is when access ends, which a host storing "premium until" needs: in a
    /// billing grace period the grace period's end (after `expires_at`), after a refund the revocation's date (before it).
    @Test func eventsSayWhenAccessEndsBesideThePeriodsEnd() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            _ = try await WebhookEndpoints(client: db.client).add(url: "http://127.0.0.1:9/hook", logger: db.logger)
            try await playInOrder(
                SubscriptionLifecycles.graceThenRecover().facts + SubscriptionLifecycles.upgradeRefundReversed().facts, pipeline: pipeline)
            /// Where `ends_at` falls against `expires_at` in each event of `type`, oldest first.
            func ends(_ type: String) async throws -> [String] {
                try await db.client.query(
                    """
                    SELECT CASE WHEN (payload->>'ends_at')::timestamptz > (payload->>'expires_at')::timestamptz THEN 'after'
                                WHEN (payload->>'ends_at')::timestamptz < (payload->>'expires_at')::timestamptz THEN 'before'
                                WHEN payload->>'ends_at' IS NULL THEN 'absent' ELSE 'same' END
                    FROM webhook_events WHERE type = \(type) ORDER BY occurred_at
                    """, logger: db.logger
                ).decode(String.self).readToEnd()
            }
            #expect(try await ends("subscription.billing_issue") == ["after"])
            #expect(try await ends("subscription.refunded") == ["before"])
            #expect(try await ends("subscription.started").allSatisfy { $0 == "same" })
        }
    }

    /// A loopback receiver that fails the first `failures` requests, then accepts, and keeps what it got.
    actor Receiver {
        var failures: Int
        var received: [(headers: HTTPFields, body: Data)] = []
        init(failures: Int) { self.failures = failures }
        /// Answers 200 from now on.
        func recover() { failures = 0 }
        func take(_ headers: HTTPFields, _ body: Data) -> HTTPResponse.Status {
            received.append((headers, body))
            if failures > 0 {
                failures -= 1
                return .internalServerError
            }
            return .ok
        }
    }

    /// Runs `body` with a live endpoint at `url` whose answers `receiver` decides (failing its first `failures`), a
    /// fresh database, and a pipeline over it.
    static func withHook(
        failures: Int = 0, _ body: @Sendable (_ receiver: Receiver, _ url: String, TestDatabase, LedgerPipeline) async throws -> Void
    ) async throws {
        let receiver = Receiver(failures: failures)
        let router = Router()
        router.post("hook") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            return Response(status: await receiver.take(request.headers, Data(body.readableBytesView)))
        }
        try await Application(router: router).test(.live) { http in
            try await TestDatabase.withFresh { db in
                try await body(receiver, "http://127.0.0.1:\(http.port!)/hook", db, try LedgerPipeline(db, pki: Self.pki))
            }
        }
    }

    /// The first fact of a subscription's life: it starts it, so its projection enqueues one webhook event.
    static var startingFact: [LedgerFact] { Array(SubscriptionLifecycles.renewThenExpire().facts.sorted { $0.sortKey < $1.sortKey }.prefix(1)) }

    @Test func deliveriesAreSignedRetriedWithBackoffAndLogged() async throws {
        try await Self.withHook(failures: 1) { receiver, url, db, pipeline in
            let secret = try #require(try await WebhookEndpoints(client: db.client).add(url: url, logger: db.logger))
            try await pipeline.append(Self.startingFact)
            try await pipeline.drain()
            let dispatcher = WebhookDispatcher(client: db.client, maximumAttempts: 3, initialBackoff: .milliseconds(1), logger: db.logger)
            #expect(try await dispatcher.deliverDue() == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' AND last_status = 500") == 1)
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await dispatcher.deliverDue() == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered' AND attempts = 2") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_delivery_attempts") == 2)
            let received = await receiver.received
            #expect(received.count == 2)
            let last = try #require(received.last)
            let signature = try #require(last.headers[HTTPField.Name(WebhookSignature.headerName)!])
            #expect(WebhookSignature.isValid(signature, body: last.body, secret: secret))
            #expect(!WebhookSignature.isValid(signature, body: last.body + Data("x".utf8), secret: secret))
            #expect(!WebhookSignature.isValid(signature, body: last.body, secret: "whsec_other"))
            #expect(!WebhookSignature.isValid(signature, body: last.body, secret: secret, now: Date().addingTimeInterval(3600)))
            let json = try #require(try JSONSerialization.jsonObject(with: last.body) as? [String: Any])
            #expect(json["type"] as? String == "subscription.started")
            #expect(json["id"] as? String == last.headers[HTTPField.Name("StoreLedger-Event-Id")!])
            #expect(received.first?.headers[HTTPField.Name("StoreLedger-Event-Id")!] == last.headers[HTTPField.Name("StoreLedger-Event-Id")!])
            #expect(json.keys.contains("user_id") && json["environment"] as? String == "Sandbox" && json["occurred_at"] is String)
        }
    }

    @Test func anUnreachableEndpointFailsForGoodWithoutHoldingTheLedgerBack() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            _ = try await WebhookEndpoints(client: db.client).add(url: "http://127.0.0.1:9/unreachable", logger: db.logger)
            try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == SubscriptionLifecycles.renewThenExpire().facts.count)
            let dispatcher = WebhookDispatcher(
                client: db.client, maximumAttempts: 2, initialBackoff: .milliseconds(1), timeout: .seconds(2), logger: db.logger)
            for _ in 0..<3 {
                try await dispatcher.deliverDue()
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state <> 'failed'") == 0)
            #expect(
                try await db.scalar("SELECT count(*) FROM webhook_delivery_attempts WHERE error IS NOT NULL")
                    == (try await db.scalar("SELECT count(*) FROM webhook_deliveries")) * 2)
        }
    }

    /// An endpoint that accepts and never answers holds only its own share of the dispatcher's slots: deliveries to a
    /// healthy endpoint, due after 30 of the hanging one's, go out while at most about twice its share of those are
    /// claimed (a batch dispatcher took 20 of them first, and waited out their timeout before any other).
    @Test func anEndpointThatHangsHoldsOnlyItsShareOfTheDeliverySlots() async throws {
        let released = AnsweredFlag()
        let router = Router()
        router.post("hang") { _, _ -> Response in
            let start = ContinuousClock.now
            while !released.isSet && start.duration(to: .now) < .seconds(60) { try await Task.sleep(for: .milliseconds(20)) }
            return Response(status: .ok)
        }
        try await Application(router: router).test(.live) { hanging in
            try await Self.withHook { receiver, url, db, _ in
                let endpoints = WebhookEndpoints(client: db.client)
                _ = try await endpoints.add(url: "http://127.0.0.1:\(hanging.port!)/hang", logger: db.logger)
                _ = try await endpoints.add(url: url, logger: db.logger)
                // 30 events for the hanging endpoint alone, then 3 for both, each due after the 30.
                try await db.client.query(
                    """
                    WITH ev AS (
                        INSERT INTO webhook_events (id, type, environment, original_transaction_id, entitled, occurred_at, payload)
                        SELECT gen_random_uuid(), 'subscription.renewed', 'Sandbox', 'h' || n, true, now(), '{}'::jsonb
                        FROM generate_series(1, 33) n
                        RETURNING id, original_transaction_id
                    )
                    INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at)
                    SELECT ev.id, ep.id, now() - make_interval(secs => 100 - substr(ev.original_transaction_id, 2)::int)
                    FROM ev, webhook_endpoints ep
                    WHERE ep.url LIKE '%/hang' OR substr(ev.original_transaction_id, 2)::int > 30
                    """, logger: db.logger
                ).readToEnd()
                // The hanging deliveries' timeout far beyond the waits below (released at the end): on a loaded machine
                // the healthy deliveries may take tens of seconds, and must still arrive while the hanging ones hang.
                let dispatcher = WebhookDispatcher(client: db.client, timeout: .seconds(300), pollInterval: .milliseconds(50), logger: db.logger)
                let running = Task { try await dispatcher.run() }
                let served = try await eventually(within: .seconds(60), every: .milliseconds(50)) { await receiver.received.count == 3 }
                let hangingClaimed = try await db.scalar(
                    "SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.url LIKE '%/hang' AND d.attempts > 0"
                )
                // More work for the healthy endpoint while the hanging deliveries are still in flight: a freed slot takes
                // it at once (a dispatcher that waits for its whole batch would wait for the hanging ones' timeout).
                try await db.client.query(
                    """
                    WITH ev AS (
                        INSERT INTO webhook_events (id, type, environment, original_transaction_id, entitled, occurred_at, payload)
                        SELECT gen_random_uuid(), 'subscription.renewed', 'Sandbox', 'later' || n, true, now(), '{}'::jsonb
                        FROM generate_series(1, 3) n RETURNING id
                    )
                    INSERT INTO webhook_deliveries (event_id, endpoint_id) SELECT ev.id, ep.id FROM ev, webhook_endpoints ep WHERE ep.url NOT LIKE '%/hang'
                    """, logger: db.logger
                ).readToEnd()
                let servedAgain = try await eventually(within: .seconds(60), every: .milliseconds(50)) { await receiver.received.count == 6 }
                let hangingEnded = try await db.scalar(
                    "SELECT count(*) FROM webhook_delivery_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id WHERE e.url LIKE '%/hang'")
                released.set()
                running.cancel()
                _ = await running.result
                #expect(served && servedAgain)
                #expect(hangingEnded == 0, "the healthy endpoint's later deliveries waited for the hanging ones to end")
                #expect(hangingClaimed <= 8, "\(hangingClaimed) of the hanging endpoint's deliveries were claimed first")
            }
        }
    }

    /// A consumer that was down past the last attempt is back: `webhooks retry URL` makes its failed deliveries due again
    /// with a new series of attempts, and they are delivered; an inactive or unknown URL is refused.
    @Test func failedDeliveriesAreDeliveredAgainOnceRetried() async throws {
        try await Self.withHook(failures: 1_000) { receiver, url, db, pipeline in
            let endpoints = WebhookEndpoints(client: db.client)
            _ = try await endpoints.add(url: url, logger: db.logger)
            try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
            try await pipeline.drain()
            let dispatcher = WebhookDispatcher(
                client: db.client, maximumAttempts: 1, initialBackoff: .milliseconds(1), timeout: .seconds(5), logger: db.logger)
            try await dispatcher.deliverDue()
            let failed = try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'failed'")
            #expect(failed > 0)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state <> 'failed'") == 0)
            await receiver.recover()
            #expect(try await endpoints.retryFailed(url: url, logger: db.logger) == failed)
            try await dispatcher.deliverDue()
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'") == failed)
            #expect(try await endpoints.retryFailed(url: url, logger: db.logger) == 0)
            #expect(try await endpoints.retryFailed(url: "https://hooks.example.com/unknown", logger: db.logger) == nil)
        }
    }

    /// Endpoints on one host share its connections in the delivery client's pool: the pool allows as many as the
    /// dispatcher has deliveries in flight, so one endpoint that hangs cannot queue another's deliveries behind it
    /// (AsyncHTTPClient's default is 8 per host).
    @Test func endpointsOnOneHostCanUseAsManyConnectionsAsDeliveriesInFlight() {
        let pool = WebhookDispatcher.deliveryClientConfiguration.connectionPool
        #expect(pool.concurrentHTTP1ConnectionsPerHostSoftLimit >= WebhookDispatcher.defaultConcurrency)
    }

    /// A redirect is not followed (it would send the event elsewhere, or turn the POST into a body-less GET taken for a
    /// delivery): it is a failed attempt. An answer whose body drips slower than the deadline fails within it, not after
    /// the lease. A removed endpoint's pending deliveries end as failed and are never claimed.
    @Test func redirectsSlowBodiesAndRemovedEndpointsAreNotDeliveries() async throws {
        let elsewhere = Receiver(failures: 0)
        let router = Router()
        router.post("moved") { _, _ -> Response in Response(status: .permanentRedirect, headers: [.location: "/elsewhere"]) }
        router.post("found") { _, _ -> Response in Response(status: .found, headers: [.location: "/elsewhere"]) }
        router.on("elsewhere", method: .get) { request, _ -> Response in
            Response(status: await elsewhere.take(request.headers, Data()))
        }
        router.post("elsewhere") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 20)
            return Response(status: await elsewhere.take(request.headers, Data(body.readableBytesView)))
        }
        router.post("drip") { _, _ -> Response in
            Response(
                status: .ok,
                body: ResponseBody { writer in
                    for _ in 0..<20 {
                        try await writer.write(ByteBuffer(string: "x"))
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    try await writer.finish(nil)
                })
        }
        try await Application(router: router).test(.live) { http in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let endpoints = WebhookEndpoints(client: db.client)
                for path in ["moved", "found", "drip"] {
                    _ = try await endpoints.add(url: "http://127.0.0.1:\(http.port!)/\(path)", logger: db.logger)
                }
                try await pipeline.append(Self.startingFact)
                try await pipeline.drain()
                let dispatcher = WebhookDispatcher(
                    client: db.client, maximumAttempts: 5, initialBackoff: .seconds(60), timeout: .seconds(2), logger: db.logger)
                let start = ContinuousClock.now
                #expect(try await dispatcher.deliverDue() == 3)
                #expect(start.duration(to: .now) < .seconds(8), "the dripping body is cut at the deadline")
                #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending' AND last_error IS NOT NULL") == 3)
                #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'delivered'") == 0)
                #expect(await elsewhere.received.isEmpty)

                #expect(try await endpoints.remove(url: "http://127.0.0.1:\(http.port!)/moved", logger: db.logger))
                #expect(
                    try await db.scalar(
                        """
                        SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
                        WHERE e.url LIKE '%/moved' AND d.state = 'failed' AND d.last_error = 'endpoint removed'
                        """) == 1)
                try await db.client.query("UPDATE webhook_deliveries SET next_attempt_at = now()", logger: db.logger)
                #expect(try await dispatcher.deliverDue() == 2)
            }
        }
    }

    /// The retry delay doubles with ±20 % jitter and never exceeds the cap, jitter included (the docs' 6 hours).
    @Test func theRetryDelayNeverExceedsItsCap() async throws {
        try await TestDatabase.withFresh { db in
            let dispatcher = WebhookDispatcher(client: db.client, initialBackoff: .seconds(10), maximumBackoff: .seconds(6 * 3600), logger: db.logger)
            let first = (0..<200).map { _ in dispatcher.backoff(afterAttempt: 1) }
            #expect(first.allSatisfy { (8...12).contains($0) })
            let late = (0..<1000).map { _ in dispatcher.backoff(afterAttempt: 18) }
            #expect(late.allSatisfy { $0 <= 6 * 3600 && $0 >= 0.8 * 6 * 3600 }, "\(late.min() ?? 0)–\(late.max() ?? 0)")
            #expect(Set(late).count > 1, "retries at the cap are spread, not in lockstep")
        }
    }

    /// A database that goes silent (its backend frozen: the kernel still answers TCP, so neither the server's limits nor
    /// PostgresNIO notice) no longer holds the dispatcher for ever: its claim gives up after `databaseTimeout`, and the
    /// dispatcher goes on once the database answers again. Made by stopping the dispatcher's backend with SIGSTOP.
    @Test func aDatabaseThatStopsAnsweringDoesNotHoldTheDispatcher() async throws {
        try await SilentDatabase.withFreshDatabase { db in
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                // The claims before the stop and after it get the default bound (a loaded machine may be slow); the one
                // made while the backend is stopped, two seconds.
                let patient = WebhookDispatcher(client: client, logger: db.logger)
                let dispatcher = WebhookDispatcher(client: client, databaseTimeout: .seconds(2), logger: db.logger)
                #expect(try await patient.deliverDue() == 0)
                try await SilentDatabase.expectGivesUp("the claim", on: client, logger: db.logger) { _ = try await dispatcher.deliverDue() }
                #expect(try await patient.deliverDue() == 0, "and it goes on once the database answers again")
            }
        }
    }

    /// Adds the endpoint `url`, projects the starting fact (one delivery to it) and claims that delivery, as a
    /// dispatcher would before its attempt; returns the endpoints, the delivery store and the claimed delivery.
    static func claimFirstDelivery(
        to url: String, _ db: TestDatabase, _ pipeline: LedgerPipeline
    ) async throws -> (WebhookEndpoints, WebhookDeliveryStore, WebhookDeliveryStore.Due) {
        let endpoints = WebhookEndpoints(client: db.client)
        _ = try #require(try await endpoints.add(url: url, logger: db.logger))
        try await pipeline.append(Self.startingFact)
        try await pipeline.drain()
        let store = WebhookDeliveryStore(client: db.client)
        return (endpoints, store, try #require(try await store.claimDue(limit: 10, leaseSeconds: 60, logger: db.logger).first))
    }

    /// A delivery ended by its endpoint's removal says so on the console's webhooks page ("Last answer" shows the
    /// status first): the consumer's last status is cleared, or the row would read "failed · HTTP 503" as if the
    /// consumer had failed it.
    @Test func aDeliveryEndedByRemovalKeepsNoStatusOfTheConsumer() async throws {
        try await Self.withHook(failures: 10) { _, url, db, pipeline in
            let (endpoints, store, attempt) = try await Self.claimFirstDelivery(to: url, db, pipeline)
            try await store.record(attempt, outcome: .pending, status: 503, error: nil, milliseconds: 3, retryAfterSeconds: 0, logger: db.logger)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE last_status = 503") == 1)
            #expect(try await endpoints.remove(url: url, logger: db.logger))
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM webhook_deliveries WHERE state = 'failed' AND last_error = 'endpoint removed' AND last_status IS NULL") == 1
            )
        }
    }

    /// A removal that races delivery leaves nothing pending for the removed endpoint: an attempt that fails after the
    /// removal does not bring its delivery back, a delivery a projection enqueued unseen by the removal is ended at
    /// the next claim, and adding the URL again sends none of them.
    @Test func aRemovalRacingDeliveryLeavesNothingPending() async throws {
        try await Self.withHook(failures: 10) { receiver, url, db, pipeline in
            let (endpoints, store, inFlight) = try await Self.claimFirstDelivery(to: url, db, pipeline)
            #expect(try await endpoints.remove(url: url, logger: db.logger))
            try await store.record(inFlight, outcome: .pending, status: 500, error: nil, milliseconds: 3, retryAfterSeconds: 0, logger: db.logger)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'failed' AND last_error = 'endpoint removed'") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_delivery_attempts") == 1)

            // As a projection that read the endpoint as active before the removal committed would have left it.
            try await db.client.query(
                """
                INSERT INTO webhook_deliveries (event_id, endpoint_id)
                SELECT e.id, ep.id FROM webhook_events e, webhook_endpoints ep
                ON CONFLICT (event_id, endpoint_id) DO UPDATE SET state = 'pending', next_attempt_at = now()
                """,
                logger: db.logger)
            #expect(try await store.claimDue(limit: 10, leaseSeconds: 60, logger: db.logger).isEmpty)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_deliveries WHERE state = 'pending'") == 0)
            _ = try #require(try await endpoints.add(url: url, logger: db.logger))
            #expect(try await WebhookDispatcher(client: db.client, logger: db.logger).deliverDue() == 0)
            #expect(await receiver.received.isEmpty)
        }
    }

    /// Finished deliveries (delivered or failed) older than the retention go with their attempts; recent ones, pending
    /// ones however old, and the events stay; a retention of 0 keeps everything.
    @Test func finishedDeliveriesOlderThanTheRetentionArePruned() async throws {
        try await Self.withHook { _, url, db, pipeline in
            _ = try #require(try await WebhookEndpoints(client: db.client).add(url: url, logger: db.logger))
            _ = try #require(try await WebhookEndpoints(client: db.client).add(url: url + "2", logger: db.logger))
            _ = try #require(try await WebhookEndpoints(client: db.client).add(url: url + "3", logger: db.logger))
            _ = try #require(try await WebhookEndpoints(client: db.client).add(url: url + "4", logger: db.logger))
            try await pipeline.append(Self.startingFact)
            try await pipeline.drain()
            let dispatcher = WebhookDispatcher(client: db.client, logger: db.logger)
            #expect(try await dispatcher.deliverDue() == 4)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_delivery_attempts") == 4)
            // Delivered 40 days ago, failed 40 days ago, delivered yesterday, still pending since 40 days ago.
            try await db.client.query(
                """
                UPDATE webhook_deliveries d SET
                    state = CASE e.url WHEN \(url) THEN 'delivered' WHEN \(url + "2") THEN 'failed' WHEN \(url + "3") THEN 'delivered' ELSE 'pending' END,
                    delivered_at = CASE e.url WHEN \(url) THEN now() - interval '40 days' WHEN \(url + "3") THEN now() - interval '1 day' END,
                    next_attempt_at = now() - interval '40 days'
                FROM webhook_endpoints e WHERE e.id = d.endpoint_id
                """,
                logger: db.logger)
            #expect(try await WebhookDispatcher(client: db.client, retentionDays: 0, logger: db.logger).pruneFinished() == 0)
            #expect(try await dispatcher.pruneFinished() == 2)
            let left = try await db.client.query(
                "SELECT e.url, d.state FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id ORDER BY e.url", logger: db.logger
            ).decode((String, String).self).readToEnd()
            #expect(left.map(\.1) == ["delivered", "pending"])
            #expect(try await db.scalar("SELECT count(*) FROM webhook_delivery_attempts") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM webhook_events") == 1)
            #expect(try await dispatcher.pruneFinished() == 0)
        }
    }

    /// A rotated secret overlaps the old one for a day: deliveries carry a signature under each, so the consumer
    /// verifies with either while it switches; after the overlap only the new one signs.
    @Test func aRotatedSecretSignsBesideTheOldOneForADay() async throws {
        try await Self.withHook { receiver, url, db, pipeline in
            let endpoints = WebhookEndpoints(client: db.client)
            let old = try #require(try await endpoints.add(url: url, logger: db.logger))
            let new = try #require(try await endpoints.add(url: url, rotatingSecret: true, logger: db.logger))
            try await pipeline.append(Self.startingFact)
            try await pipeline.drain()
            let dispatcher = WebhookDispatcher(client: db.client, logger: db.logger)
            #expect(try await dispatcher.deliverDue() == 1)
            let first = try #require(await receiver.received.last)
            let signed = try #require(first.headers[HTTPField.Name(WebhookSignature.headerName)!])
            #expect(WebhookSignature.isValid(signed, body: first.body, secret: new))
            #expect(WebhookSignature.isValid(signed, body: first.body, secret: old))

            // The overlap over, the same delivery sent again carries the new secret's signature alone.
            try await db.client.query("UPDATE webhook_endpoints SET previous_secret_expires_at = now() - interval '1 second'", logger: db.logger)
            try await db.client.query("UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = now()", logger: db.logger)
            #expect(try await dispatcher.deliverDue() == 1)
            #expect(await receiver.received.count == 2)
            let later = try #require(await receiver.received.last)
            let resigned = try #require(later.headers[HTTPField.Name(WebhookSignature.headerName)!])
            #expect(WebhookSignature.isValid(resigned, body: later.body, secret: new))
            #expect(!WebhookSignature.isValid(resigned, body: later.body, secret: old))
        }
    }

    /// The receiver check docs/webhooks.md gives, run as written: it accepts a header signed with its secret alone or
    /// beside another (a rotation's two `v1=`), and refuses a wrong secret, an altered body or an
    /// old timestamp.
    @Test func theDocumentedReceiverCheckAcceptsEitherSecretOfARotation() async throws {
        let document = try String(
            contentsOf: ThrowawayCluster.repositoryRoot.appendingPathComponent("docs/webhooks.md"), encoding: .utf8)
        let start = try #require(document.range(of: "```python\n"))
        let end = try #require(document.range(of: "```", range: start.upperBound..<document.endIndex))
        let snippet = String(document[start.upperBound..<end.lowerBound])
        #expect(snippet.contains("def valid("))
        let body = Data(#"{"id":"e1","type":"subscription.started"}"#.utf8)
        let now = Int64(Date().timeIntervalSince1970)
        let cases: [(header: String, body: Data, secret: String, valid: Bool)] = [
            (WebhookSignature.header(body: body, secret: "new", timestamp: now), body, "new", true),
            (WebhookSignature.header(body: body, secret: "new", previousSecret: "old", timestamp: now), body, "new", true),
            (WebhookSignature.header(body: body, secret: "new", previousSecret: "old", timestamp: now), body, "old", true),
            (WebhookSignature.header(body: body, secret: "new", previousSecret: "old", timestamp: now), body, "other", false),
            (WebhookSignature.header(body: body, secret: "new", timestamp: now), Data("{}".utf8), "new", false),
            (WebhookSignature.header(body: body, secret: "new", timestamp: now - 3_600), body, "new", false),
        ]
        let harness = """
            import base64, sys
            for line in sys.stdin:
                header, body, secret = line.split()
                print(valid(base64.b64decode(header).decode(), base64.b64decode(body), base64.b64decode(secret).decode()))

            """
        let program = snippet + harness
        let input = cases.map { [Data($0.header.utf8), $0.body, Data($0.secret.utf8)].map { $0.base64EncodedString() }.joined(separator: " ") }
        let run = try await CommandRun.run("/usr/bin/env", ["python3", "-c", program], input: input.joined(separator: "\n") + "\n")
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.split(separator: "\n").map(String.init) == cases.map { $0.valid ? "True" : "False" })
        // The same cases through the Swift check the tests use.
        for item in cases { #expect(WebhookSignature.isValid(item.header, body: item.body, secret: item.secret) == item.valid) }
    }
}
