import Foundation
import Logging
import PostgresNIO
import StoreLedgerStore

/// Process-wide set-up shared by the commands.
enum Bootstrap {
    /// Bootstraps logging once at `level` and returns a logger labelled `label`.
    static func logger(_ label: String, level: Logger.Level) -> Logger {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    /// A Postgres client for the configured database (run it as a service).
    static func client(_ environment: Environment, logger: Logger) throws -> PostgresClient {
        let url = try environment.databaseURL()
        logger.info("database", metadata: ["url": "\(url)"])
        return PostgresClient(
            configuration: try url.clientConfiguration(maximumConnections: environment.maximumConnections()),
            backgroundLogger: logger
        )
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
}
