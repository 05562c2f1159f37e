import ArgumentParser
import Configuration
import Logging
import Metrics
import PostgresNIO
import Prometheus
import StoreLedgerServer
import StoreLedgerStore

/// Process-wide set-up shared by the commands: the one configuration reader (the process environment), logging and
/// metrics bootstrapped once, and a database for the short-lived operator commands.
enum Bootstrap {
    /// The process's configuration reader.
    static let reader = Settings.environmentReader()

    /// The process's settings.
    static var settings: Settings { Settings(reader: reader) }

    /// Bootstraps logging once (`LOG_FORMAT`, and `LOG_LEVEL` unless `level` overrides it) and returns a logger
    /// labelled `label`.
    static func logger(_ label: String, level: Logger.Level? = nil) throws -> Logger {
        let factory = try ServerProcess.logHandlerFactory(reader: reader)
        let level = try level ?? settings.logLevel()
        LoggingSystem.bootstrap { label in
            var handler = factory(label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// Bootstraps swift-metrics with a Prometheus registry and returns it. Call it once, first: metrics created before
    /// it stay no-ops.
    static func metrics() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }

    /// The context of a long-running command (`serve`, `work`, `dev`): logging and metrics bootstrapped, the database
    /// checked and its clients made (`listens`: with the worker's LISTEN client, when `DATABASE_LISTEN_URL` is set).
    static func serverContext(_ label: String, listens: Bool = true) async throws -> ServerContext {
        let logger = try logger(label)
        return try await ServerContext.connect(reader: reader, logger: logger, metrics: metrics(), listens: listens)
    }

    /// Runs a short-lived command's `body` with a running client for the configured database and a logger labelled
    /// `label` (shared by the operator commands).
    static func withDatabase<Result: Sendable>(
        _ label: String, level: Logger.Level? = nil, _ body: @Sendable (PostgresClient, Logger) async throws -> Result
    ) async throws -> Result {
        let context = try await ServerContext.connect(reader: reader, logger: try logger(label, level: level), listens: false)
        return try await withRunningClient(context.client) { try await body(context.client, context.logger) }
    }

    /// Runs `body` with `client` running, then shuts the client down.
    static func withRunningClient<Result: Sendable>(
        _ client: PostgresClient,
        _ body: @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // The body starts once the client's task has: a lease asked for before `run()` began makes PostgresNIO
            // log a warning ("run() hasn't been called yet") that an operator would take for a fault.
            let (started, starting) = AsyncStream<Void>.makeStream()
            group.addTask {
                starting.finish()
                await client.run()
            }
            defer { group.cancelAll() }
            for await _ in started {}
            // The child is between the signal and run()'s first line: let it get there. A yield alone was not enough on
            // a loaded machine (the warning showed in a full test run); PostgresNIO exposes no "running" flag to wait on.
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(20))
            do {
                return try await body()
            } catch let error as PSQLError {
                // PostgresNIO's description of it is generic on purpose: say what the server said, or that the outcome
                // is unknown.
                throw CommandFailure(error.operatorMessage)
            }
        }
    }
}
