import ArgumentParser
import Foundation
import Hummingbird
import Logging
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerWorker

/// `storeledger dev`: migrate, then run the receiver and a worker in one process.
///
/// `scripts/dev` wraps it with a throwaway local Postgres when `DATABASE_URL` is unset.
struct DevCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Development: migrate, then run receiver and worker together in one process."
    )

    /// The bundle id `dev` accepts when `APP_BUNDLE_ID` is unset (the simulator's default).
    static let defaultBundleID = "com.example.storeledger"

    /// Migrates, then runs the receiver with a worker as one of its services until SIGINT/SIGTERM.
    func run() async throws {
        let environment = Environment()
        let logger = Bootstrap.logger("storeledger.dev", level: try environment.logLevel())
        let registry = Bootstrap.metrics()
        let client = try await Bootstrap.client(environment, logger: logger)
        let listenClient = try await Bootstrap.listenClient(environment, logger: logger)
        let migrator = Migrator(migrations: try Migration.bundled())
        let receiver = try environment.receiver()
        // The simulator signs with this CA; trusting it beside Apple's roots lets `storeledger simulate` feed
        // `dev` with no configuration. Only `dev` does this: `serve`/`work` trust exactly the configured roots.
        // A CA that does not cover every date `simulate` can sign (one minted by an older StoreLedger) is renewed
        // here, before anything trusts it; its old root stays trusted, so what it signed still verifies.
        let developmentCA = try DevelopmentCertificateAuthority.loadOrCreate(covering: DevelopmentCertificateAuthority.requiredValidity())
        logger.notice(
            "trusting the development CA in addition to the configured roots",
            metadata: [
                "ca": "\(developmentCA.directory.path)", "minted": "\(developmentCA.wasCreated)",
                "superseded_roots": "\(developmentCA.supersededRootsDER.count)",
            ]
        )
        let verifiers = try environment.verifiers(
            defaultBundleID: Self.defaultBundleID, extraRootsDER: developmentCA.trustedRootsDER
        )
        let worker = WorkerService(
            client: client,
            handler: try environment.ledgerHandler(verifiers: verifiers),
            configuration: try environment.worker(),
            logger: logger,
            listenClient: listenClient,
            preflight: { try await migrator.migrate(client: client, logger: logger) }
        )
        let authentication = try await DevelopmentAuthentication.configuration(environment, logger: logger)
        let appAPI = try await AppAPIBootstrap.make(
            environment, client: client, verifiers: verifiers, authentication: authentication, logger: logger
        )
        let admin = try Bootstrap.adminService(
            environment, defaultPort: 9090, registry: registry, client: client, migrator: migrator, console: true, logger: logger
        )
        let queueMetrics = QueueMetricsService(client: client, logger: logger)
        let webhooks = WebhookDispatcher(client: client, maximumAttempts: try environment.int("WEBHOOK_MAX_ATTEMPTS", default: 12, in: 1...100), logger: logger)
        let app = buildReceiverApplication(
            client: client, migrator: migrator, configuration: receiver, appAPI: appAPI,
            services: (listenClient.map { [$0] } ?? []) + [worker, queueMetrics, webhooks] + (admin.map { [$0] } ?? []),
            migrateOnStart: true, logger: logger
        )
        try await Bootstrap.run([app], environment, logger: logger)
    }
}
