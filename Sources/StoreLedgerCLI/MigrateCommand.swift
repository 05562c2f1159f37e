import ArgumentParser
import Logging
import StoreLedgerServer
import StoreLedgerStore

/// `storeledger migrate`: applies pending `sql/` migrations (safe to run concurrently; a no-op when current).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations (the Procfile's release step)."
    )

    /// Only report what is pending.
    @Flag(help: "Print the schema status and exit non-zero when migrations are pending; apply nothing.")
    var check = false

    func run() async throws {
        let context = try await ServerContext.connect(reader: Bootstrap.reader, logger: try Bootstrap.logger("storeledger.migrate"), listens: false)
        let (client, migrator, logger) = (context.client, context.migrator, context.logger)
        try await Bootstrap.withRunningClient(client) {
            if check {
                let status = try await migrator.status(client: client, logger: logger)
                print("applied: \(status.applied.map(String.init).joined(separator: ", "))")
                print("pending: \(status.pending.map(String.init).joined(separator: ", "))")
                if !status.isCurrent { throw ExitCode(3) }
                return
            }
            let applied = try await migrator.migrate(client: client, logger: logger)
            logger.info(
                applied.isEmpty ? "schema is current" : "applied migrations",
                metadata: [
                    "applied": "\(applied.map(String.init).joined(separator: ","))"
                ])
        }
    }
}
