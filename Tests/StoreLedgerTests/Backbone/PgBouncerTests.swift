import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

/// StoreLedger through a real PgBouncer (Debian's package, started by `scripts/pgbouncer`), in session and in
/// transaction mode. In transaction mode the pooler has fewer server connections than the client has connections, so
/// that consecutive statements of one client connection reach different server sessions, as they do at scale.
@Suite(
    "PgBouncer",
    .enabled("pgbouncer is not installed and scripts/pgbouncer cannot install it here (it needs root and apt-get)") {
        await ThrowawayPgBouncer.isAvailable()
    }
)
struct PgBouncerTests {
    static let modes: [DatabasePooler] = [.session, .transaction]
    let migrator = Migrator(migrations: try! Migration.bundled())

    /// Runs `body` with a fresh database, a PgBouncer in `mode` in front of it, and a client through the pooler, with
    /// the ``DatabaseSessions`` a process configured with `DATABASE_POOLER=mode` hands to what runs statements.
    ///
    /// The client has 8 connections. A session-mode pool holds a server connection per client connection for the
    /// client connection's life, so it gets 8 (with fewer, the surplus would wait for `query_wait_timeout`); a
    /// transaction-mode pool gets 2, shared between the 8.
    func throughPgBouncer<Result: Sendable>(
        _ mode: DatabasePooler,
        migrated: Bool = true,
        _ body: @Sendable (TestDatabase, PostgresClient, DatabaseSessions) async throws -> Result
    ) async throws -> Result {
        let clientConnections = 8
        return try await TestDatabase.withFresh(migrated: migrated) { db in
            let poolSize = mode == .session ? clientConnections : 2
            return try await ThrowawayPgBouncer.with(mode: mode, in: db.url, poolSize: poolSize) { bouncer in
                try await TestDatabase.withClient(bouncer.url(for: db.url), maximumConnections: clientConnections) { pooled in
                    try await body(db, pooled, DatabaseSessions(pooler: mode))
                }
            }
        }
    }

    func count(_ db: TestDatabase, _ state: QueueState) async throws -> Int {
        try await db.scalar("SELECT count(*) FROM event_queue WHERE state = \(state.rawValue)")
    }

    /// Runs `worker` in a service group while `body` runs, then shuts it down gracefully.
    func running<Handler: EventHandler>(_ worker: WorkerService<Handler>, _ body: () async throws -> Void) async throws {
        let group = ServiceGroup(configuration: .init(services: [.init(service: worker)], logger: TestDatabase.makeLogger()))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test(arguments: modes)
    func theReceiverStoresEveryNotificationItAcknowledges(_ mode: DatabasePooler) async throws {
        try await throughPgBouncer(mode) { db, pooled, sessions in
            // A store timeout no loaded test machine reaches: this is about what the pooler lets through, not speed.
            let configuration = ReceiverConfiguration(port: 0, storeTimeout: .seconds(120))
            let app = Application(router: buildReceiverRouter(client: pooled, migrator: migrator, configuration: configuration, sessions: sessions))
            let bodies = (0..<40).map { #"{"signedPayload":"header.payload.\#($0)"}"# }
            let statuses = try await app.test(.router) { client in
                try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for body in bodies {
                        group.addTask {
                            try await client.execute(uri: "/notifications/apple", method: .post, body: ByteBuffer(string: body)) { $0.status }
                        }
                    }
                    var statuses: [HTTPResponse.Status] = []
                    for try await status in group { statuses.append(status) }
                    return statuses
                }
            }
            #expect(statuses.count == bodies.count)
            #expect(statuses.allSatisfy { $0 == .ok }, "\(statuses.filter { $0 != .ok })")
            var stored: [String] = []
            for try await body in try await db.client.query("SELECT body FROM events", logger: db.logger).decode(ByteBuffer.self) {
                stored.append(String(buffer: body))
            }
            #expect(stored.sorted() == bodies.sorted())
            #expect(try await count(db, .pending) == bodies.count)
        }
    }

    @Test func aWorkerDrainsThroughTransactionPoolingByPolling() async throws {
        let lifecycle = SubscriptionLifecycles.renewThenExpire()
        try await throughPgBouncer(.transaction) { db, pooled, sessions in
            let pipeline = try LedgerPipeline(db, pki: LedgerHandlerTests.pki)
            try await pipeline.append(lifecycle.facts)
            // No DATABASE_LISTEN_URL: behind a transaction pooler the worker does not LISTEN (and says so once), it polls.
            let logs = AppStoreAPIClientTests.CapturedLogs()
            var logger = Logger(label: "worker") { _ in AppStoreAPIClientTests.CapturedLogs.Handler(sink: logs) }
            logger.logLevel = .notice
            let worker = WorkerService(
                client: pooled, handler: pipeline.handler,
                configuration: .init(concurrency: 2, batchSize: 2, pollInterval: .milliseconds(200)), logger: logger, sessions: sessions
            )
            try await running(worker) {
                let drained = try await eventually(within: .seconds(30), every: .milliseconds(50)) {
                    try await count(db, .done) == lifecycle.facts.count
                }
                #expect(drained)
            }
            #expect(logs.all.filter { $0.hasPrefix("not listening for new work") }.count == 1, "\(logs.all)")
            let row = try #require(try await pipeline.subscription("1000"))
            #expect(row["status"] as? String == "expired")
            #expect(try await count(db, .processing) == 0)
        }
    }

    @Test func aWorkerBehindTransactionPoolingWakesThroughItsDirectListenConnection() async throws {
        try await throughPgBouncer(.transaction) { db, pooled, sessions in
            let logs = AppStoreAPIClientTests.CapturedLogs()
            var logger = Logger(label: "worker") { _ in AppStoreAPIClientTests.CapturedLogs.Handler(sink: logs) }
            logger.logLevel = .notice
            let worker = WorkerService(
                client: pooled, handler: EnvelopeHandler(),
                configuration: .init(concurrency: 1, pollInterval: .seconds(600), rescueInterval: .seconds(600)),
                logger: logger, listenClient: db.client, sessions: sessions
            )
            try await running(worker) {
                try await Task.sleep(for: .milliseconds(500))  // the loop has found nothing and sleeps
                for _ in 0..<3 {
                    _ = try await EventLog(client: db.client).append(
                        NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)), logger: db.logger
                    )
                }
                // The poll is 10 minutes: only a NOTIFY on the direct connection can finish this.
                let woken = try await eventually(within: .seconds(30), every: .milliseconds(50)) { try await count(db, .done) == 3 }
                #expect(woken)
            }
            #expect(!logs.all.contains { $0.hasPrefix("not listening") }, "\(logs.all)")
        }
    }

    @Test(arguments: modes)
    func theMigratorRunsThroughPgBouncer(_ mode: DatabasePooler) async throws {
        try await throughPgBouncer(mode, migrated: false) { db, pooled, sessions in
            // Two release steps at once, through the pooler.
            async let first = migrator.migrate(client: pooled, logger: db.logger)
            async let second = migrator.migrate(client: pooled, logger: db.logger)
            let applied = try await first + second
            #expect(applied.sorted() == migrator.migrations.map(\.version))
            try await migrator.requireCurrent(client: pooled, logger: db.logger)
            // Nothing is left locked or half-done: a direct migration finds nothing to do.
            #expect(try await migrator.migrate(client: db.client, logger: db.logger).isEmpty)
        }
    }

    @Test func aLoginRefusedByThePoolerIsReportedWithItsCause() async throws {
        try await TestDatabase.withFresh { db in
            let url = try await ThrowawayPgBouncer.with(mode: .transaction, in: db.url) { bouncer in
                let url = bouncer.url(for: db.url)
                // What every connection used to send: PgBouncer refuses the login.
                var refused = try url.connectionConfiguration()
                refused.options.additionalStartupParameters.append(("plan_cache_mode", "force_generic_plan"))
                let error = await #expect(throws: StoreError.self) {
                    try await DatabaseURL.checkConnection(refused, target: url.description, timeout: .seconds(10), logger: db.logger)
                }
                #expect(error?.code == .unavailable)
                #expect(error?.detail.contains("unsupported startup parameter: plan_cache_mode") == true, "\(String(describing: error))")
                #expect(error?.detail.contains(url.description) == true)
                // Ours is let in.
                try await url.checkConnection(logger: db.logger)
                return url
            }
            // The pooler is gone: the cause is that nothing listens there.
            let error = await #expect(throws: StoreError.self) { try await url.checkConnection(logger: db.logger) }
            #expect(error?.detail.localizedCaseInsensitiveContains("connection refused") == true, "\(String(describing: error))")
        }
    }

    @Test func aCommandRefusedByThePoolerExitsWithTheCause() async throws {
        try await TestDatabase.withFresh { db in
            try await ThrowawayPgBouncer.with(mode: .transaction, in: db.url) { bouncer in
                // A user the pooler does not know: PgBouncer itself refuses the login.
                var url = bouncer.url(for: db.url)
                url.username = "intruder"
                let migrate = try StoreLedgerProcess(
                    ["migrate"], environment: ["DATABASE_URL": url.connectionString, "DATABASE_POOLER": "transaction"]
                )
                defer { migrate.cleanUp() }
                let status = await migrate.waitForExit(within: .seconds(60))
                #expect(status == 1, "\(migrate.output)")
                let exitMessage = "Error: unavailable: cannot connect to postgres://intruder@127.0.0.1:\(bouncer.port)/"
                #expect(migrate.output.contains(exitMessage), "\(migrate.output)")
                #expect(migrate.output.contains(#""trust" authentication failed"#), "\(migrate.output)")
                #expect(!migrate.output.contains("CircuitBreaker"))
            }
        }
    }
}
