import Configuration
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerServer
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Synchronization
import Testing

/// The applications the executable runs, built by the same functions and exercised in-process.
@Suite("Server builders")
struct ServerBuilderTests {
    @Test("serve's public application stores a notification and serves the app-facing API when an API key is configured")
    func thePublicApplicationAsServeBuildsIt() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["ADMIN_API_KEY"] = "server-key"
            let reader = ServerHarness.reader(variables)
            let app = try await buildServeApplication(reader: reader, context: try await ServerHarness.context(reader))
            try await app.test(.router) { client in
                try await client.execute(
                    uri: "/notifications/apple/sandbox", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                ) { response in
                    #expect(response.status == .ok)
                }
                try await client.execute(uri: "/v1/users/someone/entitlements", method: .get, headers: [HTTPField.Name("X-API-Key")!: "server-key"]) {
                    #expect($0.status == .ok)
                }
                try await client.execute(uri: "/v1/users/someone/entitlements", method: .get, headers: [HTTPField.Name("X-API-Key")!: "wrong"]) {
                    #expect($0.status == .unauthorized)
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 1)
        }
    }

    @Test("by default seed 002's validate answers without credentials and nothing else is open; off, it is a 401")
    func seed002sValidateIsServedByDefaultAndNothingElseOpen() async throws {
        try await TestDatabase.withFresh { db in
            let seedBody = ByteBuffer(string: #"{"transactionId":"2000000000000001","productId":"com.example.premium","revoked":false}"#)
            for anonymous in [nil, "false"] {
                var variables = ServerHarness.baseVariables(db)
                variables["ADMIN_API_KEY"] = "server-key"
                variables["IAP_VALIDATE_ANONYMOUS"] = anonymous
                let reader = ServerHarness.reader(variables)
                let app = try await buildPublicApplication(reader: reader, context: try await ServerHarness.context(reader))
                try await app.test(.router) { client in
                    // Without App Store Server API credentials it cannot look the transaction up, and says so: not a 401.
                    try await client.execute(uri: "/api/iap/validate", method: .post, headers: [.contentType: "application/json"], body: seedBody) {
                        let body = String(buffer: $0.body)
                        if anonymous == nil {
                            #expect($0.status == .serviceUnavailable && body.contains("app_store_api_not_configured"), "\(body)")
                        } else {
                            #expect($0.status == .unauthorized, "\(body)")
                        }
                    }
                    try await client.execute(uri: "/v1/users/someone/entitlements", method: .get) { #expect($0.status == .unauthorized) }
                    try await client.execute(uri: "/api/subscription/status", method: .get) { #expect($0.status == .unauthorized) }
                }
            }
        }
    }

    @Test("without any way to authenticate callers or to ask Apple, the app-facing routes are not served and no app settings are needed")
    func theAppFacingAPIIsOffWithoutAuthentication() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["APP_BUNDLE_ID"] = nil
            variables["APPS"] = nil
            let reader = ServerHarness.reader(variables)
            let app = try await buildPublicApplication(reader: reader, context: try await ServerHarness.context(reader))
            try await app.test(.router) { client in
                try await client.execute(uri: "/v1/users/someone/entitlements", method: .get) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/iap/validate", method: .post) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
            }
        }
    }

    @Test("the admin application exports the context's metrics and answers health checks; ADMIN_PORT=off builds none")
    func theAdminApplication() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["ADMIN_PORT"] = "0"
            let reader = ServerHarness.reader(variables)
            let context = try await ServerHarness.context(reader)
            context.metrics.makeCounter(
                descriptor: MetricNameDescriptor(
                    namespace: "storeledger", metricName: "builder_test", unitName: "total", helpText: "A test's counter.")
            ).increment()
            let admin = try #require(try buildAdminApplication(reader: reader, context: context, defaultPort: 9090))
            try await ServerHarness.withRunning(context.client) {
                try await Self.test(admin) { client in
                    try await client.execute(uri: "/metrics", method: .get) { response in
                        #expect(response.status == .ok)
                        #expect(String(buffer: response.body).contains("storeledger_builder_test_total 1"))
                    }
                    try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                    try await client.execute(uri: "/", method: .get) { #expect($0.status == .notFound) }
                }
            }
            let off = ServerHarness.reader(ServerHarness.baseVariables(db))
            #expect(try buildAdminApplication(reader: off, context: context, defaultPort: 9090) == nil)
        }
    }

    /// Opens the existential to test it with the router framework.
    static func test<App: ApplicationProtocol>(_ app: App, _ body: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await app.test(.router, body)
    }

    @Test("work's services: its clients first, then metrics, admin port, webhook dispatcher, and the worker last (stopped first)")
    func theWorkerServices() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["ADMIN_PORT"] = "0"
            variables["DATABASE_LISTEN_URL"] = db.url.connectionString
            let reader = ServerHarness.reader(variables)
            let context = try await ServerHarness.context(reader)
            let built = try await buildWorkerServices(reader: reader, context: context)
            // The worker, the metrics and the dispatcher start after the schema check.
            #expect(built.filter { $0 is ServiceAfterPreflight }.count == 3)
            let services = ServerHarness.unwrapped(built)
            #expect(services.count == 6)
            #expect((services[0] as? PostgresClient) === context.client)
            #expect((services[1] as? PostgresClient) === context.listenClient)
            #expect(services.contains { String(describing: type(of: $0)) == "WebhookDispatcher" })
            // A service group stops its services in reverse order, each after the one before has ended: the claim loops
            // must hear SIGTERM first, not after the dispatcher's deliveries and a reconciliation pass have ended.
            #expect(String(describing: type(of: services.last!)).hasPrefix("WorkerService"))
        }
    }

    /// `work` and `dev` reach out through one builder: the dispatcher keeps `WEBHOOK_RETENTION_DAYS` and, with
    /// `RECONCILE_INTERVAL_SECONDS`, the reconciler runs (dev used to ignore both); without the App Store Server API
    /// credentials that interval is refused, naming the setting.
    @Test func theOutboundServicesHonourTheirSettings() async throws {
        try await TestDatabase.withFresh { db in
            var variables = ServerHarness.baseVariables(db)
            variables["WEBHOOK_RETENTION_DAYS"] = "7"
            variables["RECONCILE_INTERVAL_SECONDS"] = "90"
            let refused = ServerHarness.reader(variables)
            let refusedContext = try await ServerHarness.context(refused)
            await #expect {
                _ = try await buildOutboundServices(
                    reader: refused, context: refusedContext, verifiers: { try Settings(reader: refused).verifiers() })
            } throws: { "\($0)".contains("RECONCILE_INTERVAL_SECONDS") }
            variables["APPSTORE_ISSUER_ID"] = UUID().uuidString
            variables["APPSTORE_KEY_ID"] = "KEY1234567"
            variables["APPSTORE_PRIVATE_KEY"] = P256Key.freshPEM()
            let reader = ServerHarness.reader(variables)
            let context = try await ServerHarness.context(reader)
            let services = ServerHarness.unwrapped(
                try await buildOutboundServices(reader: reader, context: context, verifiers: { try Settings(reader: reader).verifiers() }))
            #expect(services.compactMap { $0 as? WebhookDispatcher }.map(\.retentionDays) == [7])
            #expect(services.compactMap { $0 as? ReconcilerService }.map(\.interval) == [.seconds(90)])
        }
    }

    @Test("dev migrates once, though its server and its worker both wait for the schema, then processes what it receives")
    func devMigratesOnce() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            let folder = try ServerHarness.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            var variables = ServerHarness.baseVariables(db)
            variables["WORKER_POLL_SECONDS"] = "1"
            let reader = ServerHarness.reader(variables)
            let migrations = Mutex(0)
            // Every service waits for the migration: none reads a table that does not exist yet and logs it (the
            // migration is slowed, so that one that did not wait would).
            let logs = AppStoreAPIClientTests.CapturedLogs()
            let logger = Logger(label: "dev") { _ in AppStoreAPIClientTests.CapturedLogs.Handler(sink: logs) }
            let app = try await buildDevelopmentApplication(
                reader: reader, context: try await ServerContext.connect(reader: reader, logger: logger),
                certificateAuthority: folder.appendingPathComponent("dev-ca"),
                authenticationSecretFile: folder.appendingPathComponent("dev-auth-secret"),
                migrate: { client, logger in
                    migrations.withLock { $0 += 1 }
                    try await Task.sleep(for: .seconds(1))
                    try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: logger)
                }
            )
            // Its worker is the last of its services, so the first told to stop (as in `work`).
            #expect(String(describing: type(of: ServerHarness.unwrapped(app.services).last!)).hasPrefix("WorkerService"))
            try await app.test(.router) { client in
                // The server started: the schema was migrated before it.
                #expect(try await db.scalar("SELECT count(*) FROM schema_migrations") == (try Migration.bundled().count))
                try await client.execute(
                    uri: "/notifications/apple/sandbox", method: .post, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                ) { #expect($0.status == .ok) }
                // The worker judged it (it passed its preflight, which waits for the same migration).
                let judged = try await eventually(within: .seconds(30)) {
                    try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'rejected'") == 1
                }
                #expect(judged)
            }
            #expect(migrations.withLock { $0 } == 1)
            #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("dev-auth-secret").path))
            let early = logs.all.filter { $0.contains("does not exist") }
            #expect(early.isEmpty, "\(early)")
        }
    }

    /// `dev` trusts a development CA and accepts well-known credentials: it listens on loopback unless told otherwise, and
    /// refuses a database that is not on this machine (a production one exported for operator commands) unless allowed.
    @Test func devListensOnLoopbackAndRefusesARemoteDatabase() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            let folder = try ServerHarness.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            func build(_ variables: [String: String]) async throws -> BindAddress {
                let reader = ServerHarness.reader(variables)
                let app = try await buildDevelopmentApplication(
                    reader: reader, context: try await ServerHarness.context(reader), certificateAuthority: folder.appendingPathComponent("dev-ca"),
                    authenticationSecretFile: folder.appendingPathComponent("dev-auth-secret"))
                return app.configuration.address
            }
            let variables = ServerHarness.baseVariables(db)
            #expect(try await build(variables) == .hostname("127.0.0.1", port: 0))
            #expect(try await build(variables.merging(["HOST": "0.0.0.0"]) { $1 }) == .hostname("0.0.0.0", port: 0))
            // Refused before anything connects to it (`storeledger dev` checks first; so does the builder).
            var remote = variables
            remote["DATABASE_URL"] = "postgres://ledger@db.example.com:5432/ledger"
            let refused = #expect(throws: SettingsError.self) {
                try checkDevelopmentDatabase(reader: ServerHarness.reader(remote), allowRemoteDatabase: false)
            }
            #expect(refused?.key == "DATABASE_URL" && refused?.detail.contains("--allow-remote-database") == true)
            #expect(throws: Never.self) { try checkDevelopmentDatabase(reader: ServerHarness.reader(remote), allowRemoteDatabase: true) }
        }
    }

    /// With `RECONCILE_INTERVAL_SECONDS`, dev's reconciler waits for the same one migration as its server and worker
    /// before its first run asks Apple (it would otherwise read tables that do not exist yet). The migration is made
    /// slow, and no request may reach the fake App Store Server API before it finished.
    @Test func devsReconcilerWaitsForTheOneMigration() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
                let folder = try ServerHarness.temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                var variables = ServerHarness.baseVariables(db)
                variables["RECONCILE_INTERVAL_SECONDS"] = "3600"
                variables["APPSTORE_ISSUER_ID"] = fake.issuerID
                variables["APPSTORE_KEY_ID"] = fake.keyID
                variables["APPSTORE_PRIVATE_KEY"] = fake.privateKeyPEM
                variables["APPSTORE_API_URL"] = "http://127.0.0.1:\(fake.port)/production"
                variables["APPSTORE_API_SANDBOX_URL"] = "http://127.0.0.1:\(fake.port)/sandbox"
                let reader = ServerHarness.reader(variables)
                let migrations = Mutex(0)
                let requestsBeforeTheSchema = Mutex<Int?>(nil)
                let app = try await buildDevelopmentApplication(
                    reader: reader, context: try await ServerHarness.context(reader),
                    certificateAuthority: folder.appendingPathComponent("dev-ca"),
                    authenticationSecretFile: folder.appendingPathComponent("dev-auth-secret"),
                    migrate: { client, logger in
                        migrations.withLock { $0 += 1 }
                        try await Task.sleep(for: .seconds(1))
                        try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: logger)
                        let asked = await fake.state.requests.count
                        requestsBeforeTheSchema.withLock { $0 = asked }
                    }
                )
                try await app.test(.router) { _ in
                    let asked = try await eventually(within: .seconds(30)) { await !fake.state.requests.isEmpty }
                    #expect(asked, "the reconciler never asked Apple")
                }
                #expect(requestsBeforeTheSchema.withLock { $0 } == 0, "the reconciler asked Apple before the schema was migrated")
                #expect(migrations.withLock { $0 } == 1)
            }
        }
    }
}
