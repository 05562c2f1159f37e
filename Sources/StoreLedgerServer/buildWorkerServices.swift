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

/// Builds the services of `storeledger work`, in start order: the context's clients, queue metrics, the admin port
/// (default 9091), the webhook dispatcher and, with `RECONCILE_INTERVAL_SECONDS`, the reconciler
/// (``buildOutboundServices(reader:context:verifiers:preflight:)``), then the claim loops (``Settings/worker()``);
/// all but the clients and the admin port refuse to start on a schema that is not current. A service group stops its
/// services in reverse order, one after the other: on SIGTERM the claim loops are told first, so they stop claiming
/// while the slower services (a webhook delivery, a reconciliation pass) end, and finish their batches in time.
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
            configuration: configuration, logger: logger, listenClient: context.listenClient, sessions: context.sessions
        )
    case .envelope:
        worker = WorkerService(
            client: client, handler: EnvelopeHandler(), configuration: configuration, logger: logger, listenClient: context.listenClient,
            sessions: context.sessions
        )
    }
    let admin = try buildAdminApplication(reader: reader, context: context, defaultPort: 9091)
    var services: [any Service] = [client] + (context.listenClient.map { [$0] } ?? [])
    services.append(ServiceAfterPreflight(QueueMetricsService(client: client, logger: logger), after: preflight))
    services += admin.map { [$0] } ?? []
    services += try await buildOutboundServices(reader: reader, context: context, verifiers: { try settings.verifiers() }, preflight: preflight)
    services.append(ServiceAfterPreflight(worker, after: preflight))
    return services
}
