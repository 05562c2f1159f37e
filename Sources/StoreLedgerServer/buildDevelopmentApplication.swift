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
///
/// Since it trusts that CA and accepts well-known credentials, it listens on loopback unless `HOST`/`ADMIN_HOST` say
/// otherwise, and refuses a database that is not on this machine (a production one exported for operator commands,
/// which it would migrate and fill with facts only the development CA signed) unless `allowRemoteDatabase`.
package func buildDevelopmentApplication(
    reader: ConfigReader,
    context: ServerContext,
    certificateAuthority: URL = DevelopmentCertificateAuthority.defaultDirectory,
    authenticationSecretFile: URL = DevelopmentAuthentication.defaultSecretFile,
    allowRemoteDatabase: Bool = false,
    migrate: (@Sendable (PostgresClient, Logger) async throws -> Void)? = nil
) async throws -> some ApplicationProtocol {
    try checkDevelopmentDatabase(reader: reader, allowRemoteDatabase: allowRemoteDatabase)
    let settings = Settings(reader: reader)
    let (client, migrator, logger) = (context.client, context.migrator, context.logger)
    let migration = MigrationOnce { [migrate] in
        if let migrate {
            try await migrate(client, logger)
        } else {
            try await migrator.migrate(client: client, logger: logger)
        }
    }
    let receiver = try settings.receiver(defaultHost: "127.0.0.1")
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
    let admin = try buildAdminApplication(reader: reader, context: context, defaultPort: 9090, defaultHost: "127.0.0.1", console: true)
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

/// Refuses a `DATABASE_URL` that is not on this machine (a unix socket or a loopback address) unless
/// `allowRemoteDatabase`: `dev` trusts a development CA and well-known credentials, and would migrate and fill a
/// production database exported for operator commands. `storeledger dev` calls it before it connects.
package func checkDevelopmentDatabase(reader: ConfigReader, allowRemoteDatabase: Bool) throws(SettingsError) {
    let database = try Settings(reader: reader).databaseURL()
    guard allowRemoteDatabase || database.isOnThisMachine else {
        throw SettingsError(
            .malformed,
            "DATABASE_URL: `dev` trusts a development CA and well-known credentials, so it runs only against a database on this "
                + "machine (a unix socket or a loopback address), not \(database.host ?? "-"): unset DATABASE_URL for a throwaway one "
                + "(scripts/dev), or pass --allow-remote-database if that database is a development one",
            key: "DATABASE_URL")
    }
}

/// The bundle id `dev` accepts when `APP_BUNDLE_ID` is unset (the simulator's default).
package let developmentBundleID = "com.example.storeledger"
