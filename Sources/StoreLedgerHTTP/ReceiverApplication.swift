package import Hummingbird
package import Logging
package import PostgresNIO
package import ServiceLifecycle
import StoreLedgerProcessing
package import StoreLedgerStore

/// Builds the public router: request ids, the notification routes, health checks and, when `appAPI` is given,
/// the app-facing API. Appends reach Postgres as `sessions` allow.
package func buildReceiverRouter(
    client: PostgresClient, migrator: Migrator, configuration: ReceiverConfiguration, appAPI: AppAPI? = nil,
    sessions: DatabaseSessions = DatabaseSessions()
) -> Router<StoreLedgerRequestContext> {
    let router = Router(context: StoreLedgerRequestContext.self)
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: JSONErrorMiddleware())
    // A transaction may run as long as its callers wait (RECEIVER_STORE_TIMEOUT_MS may exceed the log's 10 s): one
    // cut shorter would answer 503 to a commit the database then completes.
    let log = EventLog(
        client: client, sessions: sessions, concurrentCommits: configuration.concurrentCommits,
        commitTimeout: max(EventLog.defaultCommitTimeout, configuration.storeTimeout))
    ReceiverController(log: log, configuration: configuration).addRoutes(to: router)
    // A schema ahead of the build (a rollout that migrated first) is ready for a receiver alone, whose only write, the
    // append, answers 503 should the newer schema refuse it, never a false 200; taking receivers out of service on
    // every migration would refuse Apple's notifications for the rollout's length. The app API writes the read model
    // with this build's code: not on a schema it does not know.
    HealthController(client: client, migrator: migrator, timeout: configuration.readinessTimeout, allowingAhead: appAPI == nil)
        .addRoutes(to: router)
    appAPI?.addRoutes(to: router)
    // Last, so that it sees only what no route took and knows every route: 405 for a known path, else 404.
    router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
    return router
}

/// Builds the HTTP application (receiver, health and, when given, the app-facing API). It runs `client` and any `services` with it, and refuses to
/// start when the database schema is not current (running `migrate` first when given: development only).
package func buildReceiverApplication(
    client: PostgresClient,
    migrator: Migrator,
    configuration: ReceiverConfiguration,
    appAPI: AppAPI? = nil,
    services: [any Service] = [],
    sessions: DatabaseSessions = DatabaseSessions(),
    migrate: (@Sendable () async throws -> Void)? = nil,
    logger: Logger
) -> some ApplicationProtocol {
    var app = Application(
        router: buildReceiverRouter(client: client, migrator: migrator, configuration: configuration, appAPI: appAPI, sessions: sessions),
        // Apple resends a notification answered 5xx; a 4xx perhaps not: a notification that arrived too slowly is a 503.
        server: .http1(timeouts: configuration.timeouts, lateStatus: .serviceUnavailable, logger: logger),
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "storeledger"),
        services: [client] + services,
        logger: logger
    )
    app.beforeServerStarts {
        try await migrate?()
        // As readiness: a receiver alone starts on a schema ahead of its build, the app API does not.
        try await migrator.requireCurrent(client: client, logger: logger, allowingAhead: appAPI == nil)
        // The catalog the routes answer with is the one SQL (entitlements_at) reads.
        try await appAPI?.dependencies.intake.publishCatalog(logger: logger)
    }
    return app
}
