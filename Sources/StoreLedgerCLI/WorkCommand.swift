import ArgumentParser
import Logging
import ServiceLifecycle
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerWorker
import UnixSignals

/// `storeledger work`: a worker process; run as many as you like.
struct WorkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "work",
        abstract: "Run a worker: claim stored events, process them, retry failures, park what cannot succeed."
    )

    func run() async throws {
        let environment = Environment()
        let logger = Bootstrap.logger("storeledger.worker", level: try environment.logLevel())
        let client = try Bootstrap.client(environment, logger: logger)
        let migrator = Migrator(migrations: try Migration.bundled())
        let worker = WorkerService(
            client: client,
            handler: EnvelopeHandler(),
            configuration: try environment.worker(),
            logger: logger,
            preflight: { try await migrator.requireCurrent(client: client, logger: logger) }
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: client), .init(service: worker)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        try await group.run()
    }
}
