package import Configuration
import Logging
package import ServiceLifecycle
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerWorker

/// Which handler a worker runs: the real one, or (for measuring the queue alone) the envelope check.
package enum WorkerHandlerChoice: String, Sendable, CaseIterable {
    /// Verify, record facts, project (the default).
    case ledger
    /// Parse the envelope only (benchmarks).
    case envelope
}

/// Builds the services of `storeledger work`, in start order: the context's clients, the claim loops
/// (``Settings/worker()``, refusing to start on a schema that is not current), queue metrics, the admin port
/// (default 9091), the webhook dispatcher (`WEBHOOK_MAX_ATTEMPTS`, `WEBHOOK_RETENTION_DAYS`) and, with `RECONCILE_INTERVAL_SECONDS`, the
/// reconciler (which needs the App Store Server API credentials).
package func buildWorkerServices(
    reader: ConfigReader, context: ServerContext, handler: WorkerHandlerChoice = .ledger
) async throws -> [any Service] {
    let settings = Settings(reader: reader)
    let (client, migrator, logger) = (context.client, context.migrator, context.logger)
    let configuration = try settings.worker()
    let preflight: @Sendable () async throws -> Void = { try await migrator.requireCurrent(client: client, logger: logger) }
    let worker: any Service
    switch handler {
    case .ledger:
        let verifiers = try settings.verifiers()
        verifiers.warnIfProductionIsRefused(logger: logger)
        worker = WorkerService(
            client: client, handler: LedgerHandler(verifiers: verifiers, factCache: context.factCache),
            configuration: configuration, logger: logger, listenClient: context.listenClient, sessions: context.sessions, preflight: preflight
        )
    case .envelope:
        worker = WorkerService(
            client: client, handler: EnvelopeHandler(), configuration: configuration, logger: logger, listenClient: context.listenClient,
            sessions: context.sessions, preflight: preflight
        )
    }
    let admin = try buildAdminApplication(reader: reader, context: context, defaultPort: 9091)
    var services: [any Service] = [client] + (context.listenClient.map { [$0] } ?? [])
    services += [worker, QueueMetricsService(client: client, logger: logger)] + (admin.map { [$0] } ?? [])
    services.append(
        WebhookDispatcher(
            client: client, maximumAttempts: try settings.webhookMaximumAttempts(), retentionDays: try settings.webhookRetention(), logger: logger))
    if let interval = try settings.reconcileInterval() {
        guard let appStore = try await settings.appStoreClient() else {
            throw SettingsError(
                .missing, "RECONCILE_INTERVAL_SECONDS needs the App Store Server API: set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY",
                key: "RECONCILE_INTERVAL_SECONDS")
        }
        let reconciler = Reconciler(
            client: client, appStore: appStore, environments: settings.reconciliationEnvironments(try settings.verifiers()),
            sessions: context.sessions
        )
        services.append(ReconcilerService(reconciler: reconciler, interval: interval, logger: logger))
    }
    return services
}
