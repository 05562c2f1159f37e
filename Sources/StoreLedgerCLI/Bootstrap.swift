import Foundation
import Hummingbird
import Logging
import StoreLedgerHTTP
import Metrics
import Prometheus
import ServiceLifecycle
import PostgresNIO
import StoreLedgerStore
import UnixSignals

/// Process-wide set-up shared by the commands.
enum Bootstrap {
    /// Bootstraps logging once at `level` and returns a logger labelled `label`; `LOG_FORMAT=json` writes one JSON
    /// object per line instead of text.
    static func logger(_ label: String, level: Logger.Level) -> Logger {
        let json = ProcessInfo.processInfo.environment["LOG_FORMAT"]?.lowercased() == "json"
        LoggingSystem.bootstrap { label in
            if json {
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// A Postgres client for the configured database (run it as a service), once a single connection has shown
    /// that the database (or the pooler in front of it) lets us in: when it does not, the command stops within 10 s
    /// with the cause (`unsupported startup parameter`, a refused password, `connection refused`, …) in the log and
    /// in its exit message, instead of a pool retrying until `connectionCreationCircuitBreakerTripped`.
    static func client(_ environment: Environment, logger: Logger) async throws -> PostgresClient {
        let url = try environment.databaseURL()
        let pooler = try environment.databasePooler()
        logger.info("database", metadata: ["url": "\(url)", "pooler": "\(pooler)"])
        try await url.checkConnection(logger: logger)
        return PostgresClient(
            configuration: try url.clientConfiguration(maximumConnections: environment.maximumConnections()),
            backgroundLogger: logger
        )
    }

    /// A one-connection client for `DATABASE_LISTEN_URL` (the worker's LISTEN, bypassing a transaction pooler),
    /// checked like ``client(_:logger:)``; nil when unset. Run it as a service.
    static func listenClient(_ environment: Environment, logger: Logger) async throws -> PostgresClient? {
        guard let url = try environment.databaseListenURL() else { return nil }
        logger.info("LISTEN database", metadata: ["url": "\(url)"])
        try await url.checkConnection(logger: logger)
        return PostgresClient(configuration: try url.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
    }

    /// Runs a short-lived command's `body` with a running client for the configured database and a logger labelled
    /// `label` (shared by the operator commands).
    static func withDatabase<Result: Sendable>(
        _ label: String, level: Logger.Level? = nil, _ body: @Sendable (PostgresClient, Logger) async throws -> Result
    ) async throws -> Result {
        let environment = Environment()
        let logger = Self.logger(label, level: try level ?? environment.logLevel())
        let client = try await Self.client(environment, logger: logger)
        return try await withRunningClient(client) { try await body(client, logger) }
    }

    /// Runs `body` with `client` running, then shuts the client down.
    static func withRunningClient<Result: Sendable>(
        _ client: PostgresClient,
        _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    /// Runs `services` (in start order) until SIGTERM or SIGINT, then shuts them down in reverse order within a bound
    /// whatever state they are in, a dead database included: after `SHUTDOWN_TIMEOUT_SECONDS` (default 10) of graceful
    /// shutdown the services are cancelled, and a service that ignores cancellation for 5 s more ends the process.
    static func run(_ services: [any Service], _ environment: Environment, logger: Logger) async throws {
        var configuration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = .seconds(try environment.int("SHUTDOWN_TIMEOUT_SECONDS", default: 10, in: 1...3600))
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
        logger.info("stopped")
    }

    /// Bootstraps swift-metrics with a Prometheus registry. Call it once, first: metrics created before it stay
    /// no-ops.
    static func metrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }

    /// The admin server for `registry` as a service, or nil when `ADMIN_PORT=off`. `defaultPort`: 9090 for
    /// `serve` and `dev`, 9091 for `work`.
    static func adminService(
        _ environment: Environment, defaultPort: Int, registry: PrometheusCollectorRegistry, client: PostgresClient, migrator: Migrator,
        console: Bool = false, logger: Logger
    ) throws -> (any Service)? {
        guard let (host, port) = try environment.admin(defaultPort: defaultPort) else {
            logger.notice("admin port disabled (ADMIN_PORT=off): no /metrics")
            return nil
        }
        logger.info("admin port: /metrics, /healthz, /readyz", metadata: ["address": "\(host):\(port)"])
        // The web console (CONSOLE=on, CONSOLE_SESSION_HOURS): on this listener only, under /console.
        let consoleSettings = console ? try ConsoleSettings.read(environment) : .off
        let consoleController = consoleSettings.enabled ? try ConsoleController(configuration: consoleSettings, client: client) : nil
        if consoleController != nil { logger.notice("web console on the admin port", metadata: ["url": "http://\(host):\(port)/console"]) }
        return AdminApplication.service(
            host: host, port: port, registry: registry, client: client, migrator: migrator, timeouts: try environment.httpTimeouts(),
            console: consoleController, logger: logger
        )
    }
}
