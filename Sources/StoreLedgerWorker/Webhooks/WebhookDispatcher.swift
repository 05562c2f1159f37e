package import AsyncHTTPClient
import Foundation
package import Logging
import Metrics
import NIOCore
import NIOHTTP1
package import PostgresNIO
import ServiceLifecycle
import StoreLedgerStore

/// Delivers outgoing webhooks (a Service in each worker process): claims due deliveries with `FOR UPDATE SKIP
/// LOCKED` under a short lease, POSTs the event signed with the endpoint's secret (redirects refused; the answer and
/// its body within `timeout`), and records every attempt. A 2xx delivers; anything else is retried with exponential
/// backoff and jitter, until `maximumAttempts` make it `failed`. It runs apart from projection, so a slow or broken endpoint never holds the ledger back.
package struct WebhookDispatcher: Service {
    /// The database.
    package let client: PostgresClient
    /// The HTTP client.
    package let httpClient: HTTPClient
    /// Attempts before a delivery is `failed`.
    package let maximumAttempts: Int
    /// The first retry delay (doubled per attempt, with jitter, capped at `maximumBackoff`).
    package let initialBackoff: Duration
    /// The longest retry delay.
    package let maximumBackoff: Duration
    /// How long one POST may take.
    package let timeout: Duration
    /// How often to look for due deliveries when idle.
    package let pollInterval: Duration
    /// Days finished deliveries and their attempts are kept (0: forever); pruned about hourly.
    package let retentionDays: Int
    /// How long one of its database statements may go unanswered before the dispatcher stops waiting for it (default: a
    /// claim's lease): a database that goes silent (a frozen primary whose kernel still answers TCP, which neither the
    /// server's limits nor PostgresNIO notice) would otherwise hold its loop for ever; it logs and goes on instead.
    package let databaseTimeout: Duration
    /// The most deliveries in flight at once (default 20); a finished one's slot is filled at once.
    package let concurrency: Int
    /// The most deliveries of one endpoint claimed at once (default 4): an endpoint that hangs holds at most about
    /// twice that many slots (a claim may add its share to deliveries still in flight) while the others are served.
    package let perEndpoint: Int
    /// The logger.
    package let logger: Logger
    /// Where deliveries are claimed and recorded.
    private var store: WebhookDeliveryStore { WebhookDeliveryStore(client: client) }

    private let delivered = Counter(label: "storeledger_webhook_deliveries_total", dimensions: [("result", "delivered")])
    private let retried = Counter(label: "storeledger_webhook_deliveries_total", dimensions: [("result", "retry")])
    private let failed = Counter(label: "storeledger_webhook_deliveries_total", dimensions: [("result", "failed")])

    /// The HTTP client deliveries use unless given another: redirects are refused (a 3xx is a failed attempt, so an
    /// event goes to the endpoint configured and nowhere it points, and a redirect turned into a body-less GET is never
    /// taken for a delivery), connecting and reading each bounded. Its pool allows as many connections to one host as
    /// the dispatcher has deliveries in flight: endpoints sharing a host (`/a` and `/b` of one service) share its
    /// connections, and with AsyncHTTPClient's default of 8 one that hangs would queue the other's deliveries behind it
    /// until their deadline. One per process, never shut down.
    package static let deliveryClient = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: deliveryClientConfiguration)

    /// ``deliveryClient``'s configuration.
    package static let deliveryClientConfiguration: HTTPClient.Configuration = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)))
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: defaultConcurrency)
        return configuration
    }()

    /// The default for `concurrency`: deliveries in flight at once.
    package static let defaultConcurrency = 20

    /// The default for `maximumAttempts` (`WEBHOOK_MAX_ATTEMPTS`): with the default backoff (10 s doubling, at most 6 h
    /// apart, jittered) the last attempt comes 38–49 h after the first, about 43 h on average.
    package static let defaultMaximumAttempts = 19
    /// The default for `retentionDays` (`WEBHOOK_RETENTION_DAYS`).
    package static let defaultRetentionDays = 30

    /// Creates the dispatcher.
    package init(
        client: PostgresClient, httpClient: HTTPClient = WebhookDispatcher.deliveryClient, maximumAttempts: Int = defaultMaximumAttempts,
        initialBackoff: Duration = .seconds(10),
        maximumBackoff: Duration = .seconds(6 * 3600), timeout: Duration = .seconds(10), pollInterval: Duration = .seconds(1),
        retentionDays: Int = defaultRetentionDays, databaseTimeout: Duration? = nil, concurrency: Int = defaultConcurrency, perEndpoint: Int = 4,
        logger: Logger
    ) {
        self.concurrency = max(1, concurrency)
        self.perEndpoint = max(1, perEndpoint)
        self.client = client
        self.httpClient = httpClient
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
        self.timeout = timeout
        self.pollInterval = pollInterval
        self.retentionDays = max(0, retentionDays)
        self.databaseTimeout = databaseTimeout ?? .seconds(timeout.components.seconds * 3 + 30)
        self.logger = logger
    }

    /// Delivers until graceful shutdown, and prunes finished deliveries older than the retention about hourly.
    ///
    /// Up to ``concurrency`` deliveries are in flight, and a slot is refilled as soon as its delivery ends, so a slow
    /// endpoint holds only its own slots; an endpoint with ``perEndpoint`` deliveries in flight is left out of the next
    /// claims until one ends. Idle, it looks for due deliveries every ``pollInterval``.
    package func run() async throws {
        var lastPrune: ContinuousClock.Instant?
        // A child answers with the endpoint of the delivery it made, or nil when it is the poll interval's tick.
        await withTaskGroup(of: Int64?.self) { group in
            var inFlight: [Int64: Int] = [:]
            var total = 0
            var ticking = false
            while !Task.isCancelledOrShuttingDown {
                if lastPrune.map({ $0.duration(to: .now) >= .seconds(3_600) }) ?? true {
                    lastPrune = .now
                    do {
                        try await pruneFinished()
                    } catch {
                        logger.warning("webhook pruning failed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                var claimed = 0
                if total < concurrency {
                    let full = inFlight.filter { $0.value >= perEndpoint }.map(\.key)
                    do {
                        for delivery in try await claim(limit: concurrency - total, perEndpoint: perEndpoint, excluding: full) {
                            inFlight[delivery.endpointID, default: 0] += 1
                            total += 1
                            claimed += 1
                            group.addTask {
                                await deliver(delivery)
                                return delivery.endpointID
                            }
                        }
                    } catch {
                        logger.warning("webhook deliveries not claimed", metadata: ["error": "\(String(reflecting: error))"])
                    }
                }
                // Slots left and some were just filled: more may be due.
                if claimed > 0 && total < concurrency { continue }
                if !ticking {
                    ticking = true
                    group.addTask { [pollInterval] in
                        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pollInterval) }
                        return nil
                    }
                }
                // A slot freed, or the interval passed.
                guard let finished = await group.next() else { continue }
                if let endpoint = finished {
                    inFlight[endpoint, default: 1] -= 1
                    if inFlight[endpoint] == 0 { inFlight[endpoint] = nil }
                    total -= 1
                } else {
                    ticking = false
                }
            }
        }
    }

    /// Deletes deliveries that finished (delivered or failed) more than `retentionDays` ago, with their attempt log,
    /// in batches; returns how many deliveries it deleted. Pending deliveries and the events themselves stay.
    @discardableResult
    package func pruneFinished() async throws -> Int {
        guard retentionDays > 0 else { return 0 }
        var total = 0
        while true {
            let pruned = try await withDeadline(databaseTimeout) { [store, retentionDays, logger] in
                try await store.pruneFinished(olderThanDays: retentionDays, limit: 5_000, logger: logger)
            }
            total += pruned
            if pruned < 5_000 { break }
        }
        if total > 0 { logger.info("pruned finished webhook deliveries", metadata: ["count": "\(total)", "days": "\(retentionDays)"]) }
        return total
    }

    /// Claims and delivers up to `limit` due deliveries; returns how many it attempted. Throws ``DeadlineExceeded`` when
    /// the claim is not answered within `databaseTimeout`.
    @discardableResult
    package func deliverDue(limit: Int = 20) async throws -> Int {
        let due = try await claim(limit: limit, perEndpoint: limit, excluding: [])
        await withTaskGroup(of: Void.self) { group in
            for delivery in due { group.addTask { await deliver(delivery) } }
        }
        return due.count
    }

    /// Claims up to `limit` due deliveries, at most `perEndpoint` of each endpoint and none of `excluding`'s, under a
    /// lease of three timeouts and 30 s. Throws ``DeadlineExceeded`` when the claim is not answered within
    /// `databaseTimeout`.
    private func claim(limit: Int, perEndpoint: Int, excluding: [Int64]) async throws -> [WebhookDeliveryStore.Due] {
        let lease = Double(timeout.components.seconds) * 3 + 30
        return try await withDeadline(databaseTimeout) { [store, logger] in
            try await store.claimDue(limit: limit, perEndpoint: perEndpoint, excluding: excluding, leaseSeconds: lease, logger: logger)
        }
    }

    private func deliver(_ delivery: WebhookDeliveryStore.Due) async {
        var request = HTTPClientRequest(url: delivery.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "StoreLedger-Webhooks/1")
        request.headers.add(name: "StoreLedger-Event-Id", value: delivery.eventID.uuidString.lowercased())
        request.headers.add(name: "StoreLedger-Event-Type", value: delivery.type)
        request.headers.add(
            name: WebhookSignature.headerName,
            value: WebhookSignature.header(
                body: delivery.body, secret: delivery.secret, previousSecret: delivery.previousSecret, timestamp: Int64(Date().timeIntervalSince1970)
            ))
        request.body = .bytes(ByteBuffer(bytes: delivery.body))
        let start = ContinuousClock.now
        var status: Int?
        var failure: String?
        do {
            // One deadline for the answer and its body: an endpoint that answers at once and then drips its body would
            // otherwise hold the attempt past its lease, and another worker would deliver it again meanwhile.
            let prepared = request
            let code = try await withDeadline(timeout) { [httpClient, timeout] in
                let response = try await httpClient.execute(
                    prepared, timeout: .nanoseconds(timeout.components.seconds * 1_000_000_000 + timeout.components.attoseconds / 1_000_000_000)
                )
                _ = try? await response.body.collect(upTo: 64 * 1024)
                return Int(response.status.code)
            }
            status = code
            if !(200..<300).contains(code) { failure = "HTTP \(code)" }
        } catch is CancellationError {
            // The process is stopping: not an attempt of the endpoint's; the lease makes it due again.
            return
        } catch {
            failure = "\(error)"
        }
        let elapsed = start.duration(to: .now)
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let exhausted = failure != nil && delivery.attempt >= maximumAttempts
        let outcome: WebhookDeliveryStore.Outcome = failure == nil ? .delivered : exhausted ? .failed : .pending
        let delay = outcome == .pending ? backoff(afterAttempt: delivery.attempt) : 0
        do {
            try await withDeadline(databaseTimeout) { [store, logger, status, failure] in
                try await store.record(
                    delivery, outcome: outcome, status: status, error: failure, milliseconds: milliseconds, retryAfterSeconds: delay, logger: logger
                )
            }
        } catch {
            logger.error("webhook outcome not recorded; the lease will make it due again", metadata: ["error": "\(String(reflecting: error))"])
            return
        }
        switch outcome {
        case .delivered: delivered.increment()
        case .failed:
            failed.increment()
            logger.warning(
                "webhook delivery failed for good", metadata: ["event": "\(delivery.eventID)", "url": "\(delivery.url)", "error": "\(failure ?? "")"])
        case .pending: retried.increment()
        }
    }

    /// Exponential backoff with ±20 % jitter, never above `maximumBackoff`: a delay the jitter would take past the cap
    /// is drawn from the cap's lower 20 % instead, so that retries at the cap stay spread too.
    package func backoff(afterAttempt attempt: Int) -> Double {
        let base = Double(initialBackoff.components.seconds) + Double(initialBackoff.components.attoseconds) / 1e18
        let cap = Double(maximumBackoff.components.seconds)
        let delay = base * pow(2, Double(min(attempt - 1, 30))) * Double.random(in: 0.8...1.2)
        return delay <= cap ? delay : cap * Double.random(in: 0.8...1.0)
    }
}
