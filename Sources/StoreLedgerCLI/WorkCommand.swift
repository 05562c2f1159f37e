import ArgumentParser
import Logging
import ServiceLifecycle
import StoreLedgerServer

/// `storeledger work`: a worker process; run as many as you like.
struct WorkCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "work",
        abstract: "Run a worker: claim stored events, process them, retry failures, park what cannot succeed."
    )

    @Option(help: "ledger (verify, record facts, project; the default) or envelope (parse only, for benchmarks).")
    var handler: WorkerHandlerChoice = .ledger

    /// Builds the worker's services (``buildWorkerServices(reader:context:handler:)``) and runs them until SIGTERM.
    func run() async throws {
        let context = try await Bootstrap.serverContext("storeledger.worker")
        let services = try await buildWorkerServices(reader: Bootstrap.reader, context: context, handler: handler)
        try await ServerProcess.serviceGroup(services, reader: Bootstrap.reader, logger: context.logger).run()
        context.logger.info("stopped")
    }
}

extension WorkerHandlerChoice: ExpressibleByArgument {}
