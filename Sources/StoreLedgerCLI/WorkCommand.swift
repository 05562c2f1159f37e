import ArgumentParser
import Logging
import ServiceLifecycle
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerWorker
import UnixSignals

/// `storeledger work`: a worker process; run as many as you like.
struct WorkCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "work",
        abstract: "Run a worker: claim stored events, process them, retry failures, park what cannot succeed."
    )

    /// Which handler runs: the real one, or (for measuring the queue alone) the envelope check.
    enum HandlerChoice: String, ExpressibleByArgument, CaseIterable {
        case ledger, envelope
    }

    @Option(help: "ledger (verify, record facts, project; the default) or envelope (parse only, for benchmarks).")
    var handler: HandlerChoice = .ledger

    /// Checks the schema, then runs the worker until SIGTERM.
    func run() async throws {
        let environment = Environment()
        let logger = Bootstrap.logger("storeledger.worker", level: try environment.logLevel())
        let registry = Bootstrap.metrics()
        let client = try await Bootstrap.client(environment, logger: logger)
        let listenClient = try await Bootstrap.listenClient(environment, logger: logger)
        let migrator = Migrator(migrations: try Migration.bundled())
        let configuration = try environment.worker()
        let preflight: @Sendable () async throws -> Void = { try await migrator.requireCurrent(client: client, logger: logger) }
        let worker: any Service
        switch handler {
        case .ledger:
            worker = WorkerService(
                client: client, handler: try environment.ledgerHandler(verifiers: try environment.verifiers()),
                configuration: configuration, logger: logger, listenClient: listenClient, preflight: preflight
            )
        case .envelope:
            worker = WorkerService(
                client: client, handler: EnvelopeHandler(), configuration: configuration, logger: logger, listenClient: listenClient,
                preflight: preflight
            )
        }
        let admin = try Bootstrap.adminService(environment, defaultPort: 9091, registry: registry, client: client, migrator: migrator, logger: logger)
        var services: [any Service] = [client] + (listenClient.map { [$0] } ?? [])
        services += [worker, QueueMetricsService(client: client, logger: logger)] + (admin.map { [$0] } ?? [])
        services.append(WebhookDispatcher(
            client: client, maximumAttempts: try environment.int("WEBHOOK_MAX_ATTEMPTS", default: 12, in: 1...100), logger: logger
        ))
        if let interval = try environment.reconcileInterval() {
            guard let appStore = try await environment.appStoreClient() else {
                throw ValidationError("RECONCILE_INTERVAL_SECONDS needs the App Store Server API: set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY")
            }
            let reconciler = Reconciler(client: client, appStore: appStore, environments: environment.reconciliationEnvironments(try environment.verifiers()))
            services.append(ReconcilerService(reconciler: reconciler, interval: interval, logger: logger))
        }
        try await Bootstrap.run(services, environment, logger: logger)
    }
}
