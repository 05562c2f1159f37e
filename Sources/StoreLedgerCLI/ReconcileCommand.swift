import ArgumentParser
import Foundation
import Logging
import StoreLedgerServer
import StoreLedgerStore
import StoreLedgerWorker

/// `storeledger reconcile [--since TIME | --hours N] [--only-failures]`: append the notifications Apple sent in a
/// window that the log never received.
struct ReconcileCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Find missed App Store notifications with Get Notification History and append them (source reconciliation)."
    )

    @Option(help: "Window start, RFC 3339 (default: --hours ago).")
    var since: String?

    @Option(help: "Window length in hours when --since is not given.")
    var hours: Double = 24

    @Flag(help: "Only notifications Apple failed to deliver.")
    var onlyFailures = false

    /// Runs one reconciliation and prints what it found.
    func run() async throws {
        let settings = Bootstrap.settings
        let logger = try Bootstrap.logger("storeledger.reconcile")
        let end = Date()
        let start: Date
        if let since {
            guard let parsed = ISO8601DateFormatter().date(from: since) else { throw ValidationError("--since \(since) is not an RFC 3339 time") }
            start = parsed
        } else {
            start = end.addingTimeInterval(-hours * 3600)
        }
        guard let appStore = try await settings.appStoreClient() else {
            throw ValidationError("reconciliation needs the App Store Server API: set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY")
        }
        let environments = settings.reconciliationEnvironments(try settings.verifiers())
        let context = try await ServerContext.connect(reader: Bootstrap.reader, logger: logger, listens: false)
        let (history, result) = try await Bootstrap.withRunningClient(context.client) {
            let reconciler = Reconciler(client: context.client, appStore: appStore, environments: environments, sessions: context.sessions)
            // First the windows of failovers or restores not reconciled yet (database_history), then the one asked for.
            return (
                try await reconciler.reconcileHistoryChanges(logger: logger),
                try await reconciler.run(from: start, to: end, onlyFailures: onlyFailures, logger: logger)
            )
        }
        if history.listed > 0 {
            print("database history changes: listed \(history.listed) notification(s); appended \(history.appended) lost one(s)")
        }
        print("listed \(result.listed) notification(s); appended \(result.appended) missed one(s) for the workers")
    }
}
