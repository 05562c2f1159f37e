import ArgumentParser
import Logging
import ServiceLifecycle
import StoreLedgerServer

/// `storeledger dev`: migrate, then run the receiver and a worker in one process.
///
/// `scripts/dev` wraps it with a throwaway local Postgres when `DATABASE_URL` is unset.
struct DevCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Development: migrate, then run receiver and worker together in one process."
    )

    @Flag(help: "Run against a DATABASE_URL that is not on this machine (dev trusts a development CA and well-known credentials).")
    var allowRemoteDatabase = false

    /// Builds the `dev` application (``buildDevelopmentApplication(reader:context:certificateAuthority:authenticationSecretFile:allowRemoteDatabase:migrate:)``)
    /// and runs it until SIGINT/SIGTERM.
    func run() async throws {
        try checkDevelopmentDatabase(reader: Bootstrap.reader, allowRemoteDatabase: allowRemoteDatabase)
        let context = try await Bootstrap.serverContext("storeledger.dev")
        let app = try await buildDevelopmentApplication(reader: Bootstrap.reader, context: context, allowRemoteDatabase: allowRemoteDatabase)
        try await ServerProcess.serviceGroup([app], reader: Bootstrap.reader, logger: context.logger).run()
        context.logger.info("stopped")
    }
}
