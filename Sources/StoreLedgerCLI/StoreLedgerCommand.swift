import ArgumentParser
import StoreLedgerStore

/// `storeledger`: the receiver, the worker, migrations and operator tools in one executable.
@main
struct StoreLedgerCommand: AsyncParsableCommand {
    /// The command's name, version and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "storeledger",
        abstract: "Turns App Store Server Notifications into a replayable subscription ledger.",
        discussion: "Configuration comes from the environment; see README.md for every key.",
        subcommands: [
            ServeCommand.self,
            WorkCommand.self,
            MigrateCommand.self,
            DevCommand.self,
            VerifyCommand.self,
            SimulateCommand.self,
            APIKeyCommand.self,
            StatsCommand.self,
            InspectCommand.self,
            RequeueCommand.self,
            ReplayCommand.self,
            RebuildCommand.self,
            ReconcileCommand.self,
            PartitionsCommand.self,
            WebhooksCommand.self,
            ConsoleUserCommand.self,
        ]
    )

    /// Runs the chosen command with `DATABASE_POOLER` bound for everything it does, so every statement it runs
    /// reaches Postgres in the way the pooler allows (see ``DatabasePooler``). A malformed value is reported by
    /// the first command that connects.
    static func main() async {
        let pooler = (try? Environment().databasePooler()) ?? .direct
        await DatabasePooler.$current.withValue(pooler) { await main(nil) }
    }
}
