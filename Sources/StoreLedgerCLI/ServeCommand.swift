import ArgumentParser
import Hummingbird
import Logging
import StoreLedgerHTTP
import StoreLedgerStore

/// `storeledger serve`: the receiver, a thin HTTP process that stores notifications.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the receiver: store every App Store Server Notification and answer 200 after commit."
    )

    func run() async throws {
        let environment = Environment()
        let logger = Bootstrap.logger("storeledger.receiver", level: try environment.logLevel())
        let client = try Bootstrap.client(environment, logger: logger)
        let app = buildReceiverApplication(
            client: client,
            migrator: Migrator(migrations: try Migration.bundled()),
            configuration: try environment.receiver(),
            logger: logger
        )
        try await app.runService()
    }
}
