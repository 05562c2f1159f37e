import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Receiver")
struct ReceiverTests {
    let migrator = Migrator(migrations: try! Migration.bundled())

    func app(_ db: TestDatabase, configuration: ReceiverConfiguration = .underTest) -> some ApplicationProtocol {
        Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: configuration))
    }

    func storedBodies(_ db: TestDatabase) async throws -> [(body: ByteBuffer, hint: String?, route: String?)] {
        let rows = try await db.client.query("SELECT body, environment_hint, route FROM events ORDER BY id", logger: db.logger)
        var result: [(ByteBuffer, String?, String?)] = []
        for try await row in rows.decode((ByteBuffer, String?, String?).self) { result.append(row) }
        return result
    }

    /// A ~60 KiB body with non-ASCII text, odd spacing and key order a re-encoder would not keep.
    static func awkwardBody(size: Int) -> ByteBuffer {
        var text = "{ \"z\": \"ünïcödé ✓ 🍎\",\n  \"signedPayload\" : \"eyJhbGciOiJFUzI1NiJ9."
        while text.utf8.count < size - 40 { text += "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" }
        text += ".c2ln\", \"a\" : 1.50 }"
        return ByteBuffer(string: text)
    }

    @Test(arguments: [100, 3_000, 60 * 1024])
    func storesTheBodyByteForByte(size: Int) async throws {
        try await TestDatabase.withFresh { db in
            let body = Self.awkwardBody(size: size)
            try await app(db).test(.router) { client in
                try await client.execute(uri: "/notifications/apple", method: .post, headers: [.contentType: "application/json"], body: body) {
                    response in
                    #expect(response.status == .ok)
                }
            }
            let stored = try await storedBodies(db)
            #expect(stored.count == 1)
            #expect(stored.first?.body == body)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'pending'") == 1)
        }
    }

    @Test func everyRouteStoresWithItsEnvironmentHint() async throws {
        try await TestDatabase.withFresh { db in
            try await app(db).test(.router) { client in
                for route in ReceiverController.routes {
                    try await client.execute(uri: route.path.description, method: .post, body: ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)) {
                        response in
                        #expect(response.status == .ok, "\(route.path)")
                    }
                }
            }
            let stored = try await storedBodies(db)
            #expect(stored.map(\.hint) == ReceiverController.routes.map { $0.hint?.rawValue })
            #expect(stored.map(\.route) == ReceiverController.routes.map { $0.path.description })
        }
    }

    @Test(arguments: [
        "", "not json", "[]", "\"signedPayload\"", #"{"payload":"a.b.c"}"#, #"{"signedPayload":42}"#,
        #"{"signedPayload":null}"#, #"{"signedPayload":""}"#, #"{"signedPayload":"a.b.c""#,
        // A repeated key: parsers disagree on which copy wins, so the receiver and the worker could read two payloads.
        #"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#, #"{"signedPayload":"a.b.c","signed\u0050ayload":"d.e.f"}"#,
        #"{"signedPayload":"a.b.c","x":1,"x":2}"#,
    ])
    func rejectsWhatIsNotANotificationAndStoresNothing(_ body: String) async throws {
        try await TestDatabase.withFresh { db in
            try await app(db).test(.router) { client in
                try await client.execute(uri: "/notifications/apple", method: .post, body: ByteBuffer(string: body)) { response in
                    #expect(response.status == .badRequest)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    let json = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: String]
                    #expect(json?["code"] == "invalid_notification")
                    #expect(json?["error"]?.isEmpty == false)
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue") == 0)
        }
    }

    @Test func refusesBodiesOver64KiBAndStoresNothing() async throws {
        try await TestDatabase.withFresh { db in
            try await app(db).test(.live) { client in
                let body = Self.awkwardBody(size: 64 * 1024 + 10)
                try await client.execute(uri: "/notifications/apple", method: .post, body: body) { response in
                    #expect(response.status == .contentTooLarge)
                    let json = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: String]
                    #expect(json?["code"] == "payload_too_large")
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    /// Behind the TLS-terminating load balancer every deployment has, the row records the sender's address from
    /// `X-Forwarded-For` when the peer is a trusted proxy; from anyone else the header is ignored.
    @Test func behindATrustedProxyTheRowRecordsTheSendersAddress() async throws {
        try await TestDatabase.withFresh { db in
            var trusting = ReceiverConfiguration.underTest
            trusting.clientAddresses = ClientAddressResolver(trustedProxies: [try #require(IPAddressRange("127.0.0.0/8"))])
            for configuration in [trusting, .underTest] {
                try await app(db, configuration: configuration).test(.live) { client in
                    for forwarded in [["X-Forwarded-For": "203.0.113.9"], [:]] {
                        var headers: HTTPFields = [.contentType: "application/json"]
                        for (name, value) in forwarded { headers[HTTPField.Name(name)!] = value }
                        try await client.execute(
                            uri: "/notifications/apple", method: .post, headers: headers, body: ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)
                        ) { #expect($0.status == .ok) }
                    }
                }
            }
            let rows = try await db.client.query("SELECT remote_address FROM events ORDER BY id", logger: db.logger).decode(String?.self).readToEnd()
            #expect(rows.count == 4)
            #expect(rows.first == "203.0.113.9", "trusted proxy, forwarded: the sender")
            for (index, row) in rows.enumerated().dropFirst() {
                #expect(row?.hasPrefix("127.0.0.1:") == true, "\(index): the peer (no header, or an untrusted peer's header)")
            }
        }
    }

    /// A peer's address is recorded as `ip:port`, an IPv6 one in brackets: `2001:db8::5:41000` would read as an address
    /// without a port.
    @Test func aPeersAddressIsRecordedUnambiguously() throws {
        #expect(ReceiverController.describe(try SocketAddress(ipAddress: "2001:db8::5", port: 41000)) == "[2001:db8::5]:41000")
        #expect(ReceiverController.describe(try SocketAddress(ipAddress: "127.0.0.1", port: 8080)) == "127.0.0.1:8080")
    }

    @Test func recordsRequestMetadataAndEchoesTheRequestID() async throws {
        try await TestDatabase.withFresh { db in
            try await app(db).test(.live) { client in
                try await client.execute(
                    uri: "/notifications/apple/sandbox", method: .post,
                    headers: [
                        .contentType: "application/json", .userAgent: "App Store Server Notifications", RequestIDMiddleware.headerName: "req-123",
                    ],
                    body: ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)
                ) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[RequestIDMiddleware.headerName] == "req-123")
                }
                try await client.execute(uri: "/healthz", method: .get) { response in
                    let id = response.headers[RequestIDMiddleware.headerName]
                    #expect(id != nil && id != "req-123")
                }
            }
            let rows = try await db.client.query(
                "SELECT remote_address, content_type, user_agent, request_id, environment_hint, source FROM events",
                logger: db.logger
            )
            var count = 0
            for try await (remote, contentType, userAgent, requestID, hint, source) in rows.decode(
                (String?, String?, String?, String?, String?, String).self)
            {
                count += 1
                #expect(remote?.hasPrefix("127.0.0.1:") == true)
                #expect(contentType == "application/json")
                #expect(userAgent == "App Store Server Notifications")
                #expect(requestID == "req-123")
                #expect(hint == "sandbox")
                #expect(source == "apple_notification")
            }
            #expect(count == 1)
        }
    }

    @Test func healthAndReadiness() async throws {
        // What readiness answers, not how fast: a generous deadline, so a first connection on a loaded CI machine
        // is not mistaken for an unreachable database.
        let patient = ReceiverConfiguration(port: 0, readinessTimeout: .seconds(60))
        try await TestDatabase.withFresh { db in
            try await app(db, configuration: patient).test(.router) { client in
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
            }
            // A check that cannot reach the database within its deadline answers 503, it does not hang.
            let hasty = ReceiverConfiguration(port: 0, readinessTimeout: .nanoseconds(1))
            try await app(db, configuration: hasty).test(.router) { client in
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(String(buffer: response.body).contains("database_unavailable"))
                }
            }
        }
        try await TestDatabase.withFresh(migrated: false) { db in
            try await app(db, configuration: patient).test(.router) { client in
                try await client.execute(uri: "/healthz", method: .get) { #expect($0.status == .ok) }
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(String(buffer: response.body).contains("schema_not_current"))
                }
            }
        }
    }

    /// A database that answers reads but refuses writes (a read-only default, as some hosts set over a plan's limit; a
    /// standby after a failover pointed elsewhere) is not ready: every notification would be answered 503.
    @Test func aDatabaseThatRefusesWritesIsNotReady() async throws {
        try await TestDatabase.withFresh { db in
            try await db.client.query(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = on', current_database()); END $$",
                logger: db.logger
            ).readToEnd()
            try await TestDatabase.withClient(db.url, maximumConnections: 2) { client in
                let router = buildReceiverRouter(
                    client: client, migrator: migrator, configuration: ReceiverConfiguration(port: 0, readinessTimeout: .seconds(60)))
                try await Application(router: router).test(.router) { http in
                    try await http.execute(uri: "/readyz", method: .get) { response in
                        #expect(response.status == .serviceUnavailable)
                        let body = String(buffer: response.body)
                        #expect(body.contains("database_not_writable") && body.contains("read-only"), "\(body)")
                    }
                    try await http.execute(
                        uri: "/notifications/apple", method: .post, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                    ) { #expect($0.status == .serviceUnavailable) }
                }
            }
        }
    }

    /// A rollout that migrates first leaves the running receivers on a schema ahead of their build: they stay ready
    /// and go on storing (a load balancer taking them out would refuse Apple's notifications meanwhile).
    @Test func aSchemaAheadOfTheBuildKeepsTheReceiverReady() async throws {
        try await TestDatabase.withFresh { db in
            var configuration = try db.url.clientConfiguration(maximumConnections: 2)
            configuration.options.keepAliveBehavior = nil
            let older = Migrator(migrations: Array(migrator.migrations.dropLast()))
            let app = buildReceiverApplication(
                client: PostgresClient(configuration: configuration), migrator: older,
                configuration: ReceiverConfiguration(port: 0, readinessTimeout: .seconds(60)), logger: db.logger)
            try await app.test(.router) { client in
                try await client.execute(uri: "/readyz", method: .get) { #expect($0.status == .ok) }
                try await client.execute(
                    uri: "/notifications/apple", method: .post, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                ) { #expect($0.status == .ok) }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 1)
            // Readiness where this build's code projects (a worker's admin port, the app API) stays strict.
            let strict = Router()
            HealthController(client: db.client, migrator: older, timeout: .seconds(60)).addRoutes(to: strict)
            try await Application(router: strict).test(.router) { client in
                try await client.execute(uri: "/readyz", method: .get) { response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(String(buffer: response.body).contains("schema_not_current"))
                }
            }
            // The admin port's /readyz follows the same rule as the public port's (a probe may point at either).
            for allowsAhead in [true, false] {
                let admin = AdminApplication.router(
                    registry: PrometheusCollectorRegistry(), client: db.client, migrator: older, readinessAllowsAhead: allowsAhead,
                    readinessTimeout: .seconds(60))
                try await Application(router: admin).test(.router) { client in
                    try await client.execute(uri: "/readyz", method: .get) {
                        #expect($0.status == (allowsAhead ? .ok : .serviceUnavailable), "readinessAllowsAhead: \(allowsAhead)")
                    }
                }
            }
        }
    }

    @Test func theReceiverRefusesToStartOnAStaleSchema() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            var configuration = try db.url.clientConfiguration(maximumConnections: 2)
            configuration.options.keepAliveBehavior = nil
            let client = PostgresClient(configuration: configuration)
            let app = buildReceiverApplication(client: client, migrator: migrator, configuration: .init(port: 0), logger: db.logger)
            let error = await #expect(throws: (any Error).self) {
                try await app.test(.router) { _ in }
            }
            #expect(String(describing: error).contains("schemaBehind") || (error as? StoreError)?.code == .schemaBehind)
        }
    }

    @Test func answers503WhenTheDatabaseCannotStoreIt() async throws {
        try await TestDatabase.withFresh { db in
            // Make inserts fail: the receiver must never answer 200 for what it did not store.
            try await db.client.query("REVOKE INSERT ON event_queue FROM PUBLIC", logger: db.logger)
            try await db.client.query("ALTER TABLE event_queue ADD CONSTRAINT refuse_all CHECK (event_id < 0) NOT VALID", logger: db.logger)
            try await app(db).test(.router) { client in
                try await client.execute(uri: "/notifications/apple", method: .post, body: ByteBuffer(string: #"{"signedPayload":"x.y.z"}"#)) {
                    response in
                    #expect(response.status == .serviceUnavailable)
                    #expect(String(buffer: response.body).contains("storage_unavailable"))
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }
}
