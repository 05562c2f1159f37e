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

    /// A loopback receiver that fails the first `failures` requests, then accepts, and keeps what it got.
    actor Receiver {
        var failures: Int
        var received: [(headers: HTTPFields, body: Data)] = []
        init(failures: Int) { self.failures = failures }
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
}
