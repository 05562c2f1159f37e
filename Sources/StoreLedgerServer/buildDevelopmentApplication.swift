package import Configuration
package import Foundation
package import Hummingbird
package import Logging
package import PostgresNIO
import ServiceLifecycle
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerWorker

/// Builds `storeledger dev` as one application: the schema migrated once, then the receiver and app-facing API with
/// a worker, queue metrics, the webhook dispatcher, the reconciler with `RECONCILE_INTERVAL_SECONDS`
/// (``buildOutboundServices(reader:context:verifiers:preflight:)``) and the admin port (default 9090) as its services.
///
/// Besides the configured roots it trusts the development CA in `certificateAuthority` (made, or renewed to cover
/// every date `simulate` can sign, here), so that `storeledger simulate` feeds it with no configuration; only `dev`
/// does this. `APP_BUNDLE_ID` defaults to ``developmentBundleID``; without configured authentication it uses the
/// development secret in `authenticationSecretFile` (``DevelopmentAuthentication``). `migrate` is the one migration
/// the server, the worker and the reconciler all wait for (default: the context's migrator).
package func buildDevelopmentApplication(
    reader: ConfigReader,
    context: ServerContext,
    certificateAuthority: URL = DevelopmentCertificateAuthority.defaultDirectory,
    authenticationSecretFile: URL = DevelopmentAuthentication.defaultSecretFile,
    migrate: (@Sendable (PostgresClient, Logger) async throws -> Void)? = nil
) async throws -> some ApplicationProtocol {
    let settings = Settings(reader: reader)
    let (client, migrator, logger) = (context.client, context.migrator, context.logger)
    let migration = MigrationOnce { [migrate] in
        if let migrate {
            try await migrate(client, logger)
        } else {
            try await migrator.migrate(client: client, logger: logger)
        }
    }
    let receiver = try settings.receiver()
    // A CA that does not cover every date `simulate` can sign (one minted by an older StoreLedger) is renewed here,
    // before anything trusts it; its old root stays trusted, so what it signed still verifies.
    let developmentCA = try DevelopmentCertificateAuthority.loadOrCreate(
        at: certificateAuthority, covering: DevelopmentCertificateAuthority.requiredValidity()
    )
    logger.notice(
        "trusting the development CA in addition to the configured roots",
        metadata: [
            "ca": "\(developmentCA.directory.path)", "minted": "\(developmentCA.wasCreated)",
            "superseded_roots": "\(developmentCA.supersededRootsDER.count)",
        ]
    )
    let verifiers = try settings.verifiers(defaultBundleID: developmentBundleID, extraRootsDER: developmentCA.trustedRootsDER)
    let worker = WorkerService(
        client: client,
        handler: LedgerHandler(verifiers: verifiers, factCache: context.factCache),
        configuration: try settings.worker(),
        logger: logger,
        listenClient: context.listenClient,
        sessions: context.sessions
    )
    let authentication = try await DevelopmentAuthentication.configuration(settings, file: authenticationSecretFile, logger: logger)
    let appAPI = try await buildAppAPI(reader: reader, context: context, verifiers: { verifiers }, authentication: authentication)
    let admin = try buildAdminApplication(reader: reader, context: context, defaultPort: 9090, console: true)
    // Every service that reads the schema waits for the one migration. The worker comes last, so that it is the
    // first told to stop (as in `work`: buildWorkerServices).
    let afterMigration: (any Service) -> any Service = { ServiceAfterPreflight($0, after: { try await migration.run() }) }
    let outbound = try await buildOutboundServices(
        reader: reader, context: context, verifiers: { verifiers }, preflight: { try await migration.run() })
    var services: [any Service] = context.listenClient.map { [$0] } ?? []
    services.append(afterMigration(QueueMetricsService(client: client, logger: logger)))
    services += outbound + (admin.map { [$0] } ?? [])
    services.append(afterMigration(worker))
    return buildReceiverApplication(
        client: client, migrator: migrator, configuration: receiver, appAPI: appAPI, services: services,
        sessions: context.sessions, migrate: { try await migration.run() }, logger: logger
    )
}

/// The bundle id `dev` accepts when `APP_BUNDLE_ID` is unset (the simulator's default).
package let developmentBundleID = "com.example.storeledger"
