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

    /// Only report where the schema stands.
    @Flag(
        help: """
            Print the schema status and apply nothing. Exit 3 while migrations of this build are pending; 1 when an \
            applied migration was edited or the database holds unknown migrations older than this build's newest; 0 \
            otherwise, also when the database is ahead (a newer build migrated it: processes that can run on it start).
            """)
    var check = false

    func run() async throws {
        let context = try await ServerContext.connect(reader: Bootstrap.reader, logger: try Bootstrap.logger("storeledger.migrate"), listens: false)
        let (client, migrator, logger) = (context.client, context.migrator, context.logger)
        try await Bootstrap.withRunningClient(client) {
            if check {
                let status = try await migrator.status(client: client, logger: logger)
                print("applied: \(Self.list(status.applied))")
                print("pending: \(Self.list(status.pending))")
                if !status.unknown.isEmpty { print("unknown to this build: \(Self.list(status.unknown))") }
                if !status.changed.isEmpty { print("edited since applied: \(Self.list(status.changed))") }
                // The rule `serve` and `work` start by: pending is "wait" (3), a diverged schema an error (1), ahead passes.
                do {
                    try migrator.requireCurrent(status, logger: logger, allowingAhead: true)
                } catch let error as StoreError where error.code == .schemaBehind {
                    throw ExitCode(3)
                } catch let error as StoreError {
                    throw CommandFailure(error.description)
                }
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

    /// Migration versions as a comma-separated list, or "none".
    private static func list(_ versions: [Int]) -> String {
        versions.isEmpty ? "none" : versions.map(String.init).joined(separator: ", ")
    }
}
