package import Configuration
package import Logging
package import PostgresNIO
package import Prometheus
package import StoreLedgerStore

/// What the parts of one `serve`, `work` or `dev` process share, built once from its settings and handed to the
/// builders: nothing here is a process-global.
///
/// The clients are not running: the application or service group built with them runs them.
package struct ServerContext: Sendable {
    /// The process's settings.
    package let settings: Settings
    /// The process's logger.
    package let logger: Logger
    /// The registry `/metrics` on the admin port exports.
    package let metrics: PrometheusCollectorRegistry
    /// The pool for `DATABASE_URL` (`DATABASE_MAX_CONNECTIONS`).
    package let client: PostgresClient
    /// A one-connection client for `DATABASE_LISTEN_URL` (the worker's LISTEN, bypassing a transaction pooler).
    package let listenClient: PostgresClient?
    /// How statements reach Postgres behind `DATABASE_POOLER`.
    package let sessions: DatabaseSessions
    /// This build's migrations.
    package let migrator: Migrator
    /// The decoded facts this process keeps for refolds (`FACT_CACHE_SIZE`), shared by its handlers.
    package let factCache: DecodedFactCache

    /// Reads the database settings through `reader` (`DATABASE_URL`, `DATABASE_POOLER`, `DATABASE_LISTEN_URL`,
    /// `DATABASE_MAX_CONNECTIONS`, `FACT_CACHE_SIZE`) and makes the clients, once a single connection has shown that
    /// the database (or the pooler in front of it) lets us in: when it does not, this throws within 10 s with the
    /// cause (`unsupported startup parameter`, a refused password, `connection refused`, …) instead of a pool
    /// retrying until `connectionCreationCircuitBreakerTripped`. `metrics` defaults to a registry of its own. A process
    /// that runs no worker passes `listens: false`: it neither reads nor checks `DATABASE_LISTEN_URL`.
    package static func connect(
        reader: ConfigReader, logger: Logger, metrics: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), listens: Bool = true
    ) async throws -> ServerContext {
        let settings = Settings(reader: reader)
        let url = try settings.databaseURL()
        let pooler = try settings.databasePooler()
        let maximumConnections = try settings.maximumConnections()
        let listenURL = listens ? try settings.databaseListenURL() : nil
        if listens, listenURL == nil, pooler.keepsSessions, maximumConnections < 2 {
            // The worker LISTENs on one of the pool's connections for as long as it runs: with one connection in all,
            // its claims would wait for a connection forever.
            throw SettingsError(
                .malformed,
                "DATABASE_MAX_CONNECTIONS=\(maximumConnections) leaves a worker no connection to claim with (its LISTEN holds one "
                    + "for good): set at least 2, or DATABASE_LISTEN_URL", key: "DATABASE_MAX_CONNECTIONS")
        }
        let factCache = DecodedFactCache(capacity: try settings.factCacheSize())
        logger.info("database", metadata: ["url": "\(url)", "pooler": "\(pooler)"])
        try await url.checkConnection(logger: logger)
        let client = PostgresClient(configuration: try url.clientConfiguration(maximumConnections: maximumConnections), backgroundLogger: logger)
        var listenClient: PostgresClient?
        if let listenURL {
            logger.info("LISTEN database", metadata: ["url": "\(listenURL)"])
            try await listenURL.checkConnection(logger: logger)
            listenClient = PostgresClient(configuration: try listenURL.clientConfiguration(maximumConnections: 1), backgroundLogger: logger)
        }
        return ServerContext(
            settings: settings, logger: logger, metrics: metrics, client: client, listenClient: listenClient,
            sessions: DatabaseSessions(pooler: pooler), migrator: Migrator(migrations: try Migration.bundled()), factCache: factCache
        )
    }

    /// A context from parts already made (tests, tools).
    package init(
        settings: Settings, logger: Logger, metrics: PrometheusCollectorRegistry, client: PostgresClient, listenClient: PostgresClient?,
        sessions: DatabaseSessions, migrator: Migrator, factCache: DecodedFactCache
    ) {
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
        self.client = client
        self.listenClient = listenClient
        self.sessions = sessions
        self.migrator = migrator
        self.factCache = factCache
    }
}
