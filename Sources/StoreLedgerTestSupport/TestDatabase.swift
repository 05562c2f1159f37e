import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerStore

/// A real, throwaway Postgres database for one test: created fresh (optionally migrated), dropped
/// afterwards. Tests run in parallel, so each gets its own database.
///
/// The server comes from `STORELEDGER_TEST_DATABASE_URL` (`scripts/test` starts a throwaway cluster and sets it;
/// never `DATABASE_URL`). Tests never mock Postgres.
package struct TestDatabase: Sendable {
    /// The fresh database's URL.
    package let url: DatabaseURL
    /// A running client connected to it.
    package let client: PostgresClient
    /// A logger for test queries.
    package let logger: Logger

    /// The configured server URL (`STORELEDGER_TEST_DATABASE_URL`, never `DATABASE_URL`, which may name the service's
    /// own database), or an error telling how to get one.
    package static func serverURL() throws -> DatabaseURL {
        let environment = ProcessInfo.processInfo.environment
        guard let text = environment["STORELEDGER_TEST_DATABASE_URL"], !text.isEmpty else {
            throw StoreError.configuration("tests need a Postgres server: run them with `scripts/test`, or set STORELEDGER_TEST_DATABASE_URL")
        }
        return try DatabaseURL(text)
    }

    /// A quiet logger for tests (`TEST_LOG_LEVEL` raises it).
    package static func makeLogger(_ label: String = "test") -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = ProcessInfo.processInfo.environment["TEST_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .critical
        return logger
    }

    /// Creates a fresh database (migrated with this build's migrations unless `migrated` is false) on `server` (the
    /// configured server unless given: a test's private ``ThrowawayCluster``), runs `body` with a running client, and
    /// drops the database afterwards.
    package static func withFresh<Result: Sendable>(
        migrated: Bool = true,
        maximumConnections: Int = 10,
        server: DatabaseURL? = nil,
        _ body: @Sendable (TestDatabase) async throws -> Result
    ) async throws -> Result {
        let server = try server ?? serverURL()
        let name = "sl_test_\(UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: ""))"
        let logger = makeLogger()
        do {
            try await serverWide("CREATE DATABASE \(name)", on: server, logger: logger)
        } catch {
            // Given up on, it may still be created later, by a server as stuck as the drop would find it: dropped in
            // the background, not waited for.
            Task { try? await drop(name, server: server, logger: logger) }
            throw error
        }
        var url = server
        url.database = name
        let result: Result
        do {
            result = try await withClient(url, maximumConnections: maximumConnections) { client in
                if migrated {
                    try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: logger)
                }
                return try await body(TestDatabase(url: url, client: client, logger: logger))
            }
        } catch {
            try? await drop(name, server: server, logger: logger)
            throw error
        }
        try await drop(name, server: server, logger: logger)
        return result
    }

    /// Runs `body` with a running client for `url`, shutting the client down afterwards.
    package static func withClient<Result: Sendable>(
        _ url: DatabaseURL,
        maximumConnections: Int = 10,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        var configuration = try url.clientConfiguration(maximumConnections: maximumConnections)
        configuration.options.keepAliveBehavior = nil
        let client = PostgresClient(configuration: configuration, backgroundLogger: makeLogger("postgres"))
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    private static func drop(_ name: String, server: DatabaseURL, logger: Logger) async throws {
        try await serverWide("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", on: server, logger: logger)
    }

    /// How long creating or dropping a test database may take.
    static let serverWideLimit: Duration = .seconds(120)

    /// Runs `statement` (CREATE or DROP DATABASE) on `server`, giving up after ``serverWideLimit``. Both wait on the
    /// whole server (DROP DATABASE until every backend of every database has answered a barrier), so one stuck backend
    /// would otherwise stall every test's set-up or teardown at once, and the run with them; this way the tests fail,
    /// saying why.
    private static func serverWide(_ statement: String, on server: DatabaseURL, logger: Logger) async throws {
        do {
            try await withDeadline(serverWideLimit) {
                _ = try await withClient(server, maximumConnections: 1) { admin in
                    try await admin.query(PostgresQuery(unsafeSQL: statement), logger: logger).readToEnd()
                }
            }
        } catch is DeadlineExceeded {
            throw StoreError.configuration(
                """
                \(statement) did not finish within \(serverWideLimit): a backend that answers none of PostgreSQL's \
                barriers (a stopped process, or one blocked writing to a client that stopped reading) holds every \
                DROP DATABASE; the server's log names it ("still waiting for backend with PID")
                """)
        }
    }

    /// Runs one SQL statement and decodes the single integer it returns.
    package func scalar(_ query: PostgresQuery) async throws -> Int {
        guard let value = try await client.query(query, logger: logger).decode(Int.self).firstAfterReadingAll() else {
            throw StoreError.configuration("query returned no row")
        }
        return value
    }
}
