public import Hummingbird
public import Logging
public import PostgresNIO
public import ServiceLifecycle
import StoreLedgerProcessing
public import StoreLedgerStore

/// Builds the public router: request ids, the notification routes, health checks and, when `appAPI` is given,
/// the app-facing API.
public func buildReceiverRouter(
    client: PostgresClient, migrator: Migrator, configuration: ReceiverConfiguration, appAPI: AppAPI? = nil
) -> Router<StoreLedgerRequestContext> {
    let router = Router(context: StoreLedgerRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: JSONErrorMiddleware())
    ReceiverController(log: EventLog(client: client, concurrentCommits: configuration.concurrentCommits), configuration: configuration).addRoutes(to: router)
    HealthController(client: client, migrator: migrator).addRoutes(to: router)
    appAPI?.addRoutes(to: router)
    // Last, so that it sees only what no route took and knows every route: 405 for a known path, else 404.
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
    return router
}

/// Builds the HTTP application (receiver, health and, when given, the app-facing API). It runs `client` and any `services` with it, and refuses to
/// start when the database schema is not current (or, with `migrateOnStart`, migrates it first:
/// development only).
public func buildReceiverApplication(
    client: PostgresClient,
    migrator: Migrator,
    configuration: ReceiverConfiguration,
    appAPI: AppAPI? = nil,
    services: [any Service] = [],
    migrateOnStart: Bool = false,
    logger: Logger
) -> some ApplicationProtocol {
    var app = Application(
        router: buildReceiverRouter(client: client, migrator: migrator, configuration: configuration, appAPI: appAPI),
        server: .http1(timeouts: configuration.timeouts, logger: logger),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "storeledger"),
        services: [client] + services,
        logger: logger
    )
    app.beforeServerStarts {
        if migrateOnStart { try await migrator.migrate(client: client, logger: logger) }
        try await migrator.requireCurrent(client: client, logger: logger)
        // The catalog the routes answer with is the one SQL (entitlements_at) reads.
        try await appAPI?.dependencies.intake.publishCatalog(logger: logger)
    }
    return app
}
