package import Configuration
import Foundation
package import Logging
package import ServiceLifecycle
import StoreLedgerHTTP
import UnixSignals

/// Process-wide set-up the executable does once, and the service group it runs.
package enum ServerProcess {
    /// A log handler factory for `LOG_LEVEL` and `LOG_FORMAT` (`json`: one JSON object per line), for
    /// `LoggingSystem.bootstrap`, which only the executable calls.
    package static func logHandlerFactory(reader: ConfigReader) throws -> @Sendable (String) -> any LogHandler {
        let settings = Settings(reader: reader)
        let level = try settings.logLevel()
        let format = try settings.logFormat()
        return { label in
            switch format {
            case .json:
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            case .text:
                var handler = StreamLogHandler.standardOutput(label: label)
                handler.logLevel = level
                return handler
            }
        }
    }

    /// A logger labelled `label` at `LOG_LEVEL`.
    package static func logger(_ label: String, reader: ConfigReader) throws -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = try Settings(reader: reader).logLevel()
        return logger
    }

    /// The service group that runs `services` (in start order) until SIGTERM or SIGINT, then shuts them down in
    /// reverse order within a bound whatever state they are in, a dead database included: after
    /// `SHUTDOWN_TIMEOUT_SECONDS` (default 10) of graceful shutdown the services are cancelled, and a service that
    /// ignores cancellation for 5 s more ends the process.
    package static func serviceGroup(_ services: [any Service], reader: ConfigReader, logger: Logger) throws -> ServiceGroup {
        var configuration = ServiceGroupConfiguration(
            services: services.map { .init(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        configuration.maximumGracefulShutdownDuration = try Settings(reader: reader).shutdownTimeout()
        configuration.maximumCancellationDuration = .seconds(5)
        return ServiceGroup(configuration: configuration)
    }
}
