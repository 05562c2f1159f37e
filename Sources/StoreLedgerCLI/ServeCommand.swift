import ArgumentParser
import Hummingbird
import Logging
import StoreLedgerHTTP
import StoreLedgerStore

/// `storeledger serve`: the receiver, a thin HTTP process that stores notifications, plus the app-facing API
/// when callers' authentication is configured.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the receiver (store every App Store Server Notification, 200 after commit) and the app-facing API.",
        discussion: "The app-facing routes are served when AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY or ADMIN_API_KEY is set."
    )

    func run() async throws {
        let environment = Environment()
        let logger = Bootstrap.logger("storeledger.receiver", level: try environment.logLevel())
        let registry = Bootstrap.metrics()
        let client = try await Bootstrap.client(environment, logger: logger)
        let migrator = Migrator(migrations: try Migration.bundled())
        let admin = try Bootstrap.adminService(
            environment, defaultPort: 9090, registry: registry, client: client, migrator: migrator, console: true, logger: logger
        )
        let appAPI = try await AppAPIBootstrap.make(environment, client: client, verifiers: try environment.verifiers(), logger: logger)
        let app = buildReceiverApplication(
            client: client,
            migrator: migrator,
            configuration: try environment.receiver(),
            appAPI: appAPI,
            services: admin.map { [$0] } ?? [],
            logger: logger
        )
        try await Bootstrap.run([app], environment, logger: logger)
    }
}
