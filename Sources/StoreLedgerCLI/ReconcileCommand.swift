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

    @Option(help: "Window start, RFC 3339 with a zone (default: --hours ago).")
    var since: String?

    @Option(help: "Window length in hours, up to now (default 24; Apple keeps 180 days, 30 in the sandbox).")
    var hours: Double?

    @Flag(help: "Only notifications Apple failed to deliver.")
    var onlyFailures = false

    /// The most hours a window may reach back: Apple keeps 180 days of notification history.
    static let maximumHours: Double = 180 * 24

    /// The window's start, from `--since` or `--hours` before `now`.
    func start(now: Date) throws -> Date {
        if let since {
            guard hours == nil else { throw ValidationError("give --since or --hours, not both") }
            guard let start = RFC3339.date(from: since) else {
                throw ValidationError("--since \(since) is not an RFC 3339 time with a zone (2026-11-01T00:00:00Z)")
            }
            guard start < now else { throw ValidationError("--since \(since) is not in the past") }
            return start
        }
        let hours = hours ?? 24
        guard hours.isFinite, hours > 0, hours <= Self.maximumHours else {
            throw ValidationError("--hours must be more than 0 and at most \(Int(Self.maximumHours)) (180 days), not \(hours)")
        }
        return now.addingTimeInterval(-hours * 3600)
    }

    /// Checks the window.
    func validate() throws { _ = try start(now: Date()) }

    /// Runs one reconciliation and prints what it found.
    func run() async throws {
        let settings = Bootstrap.settings
        let logger = try Bootstrap.logger("storeledger.reconcile")
        let end = Date()
        let start = try start(now: end)
        let appStores = try await settings.appStoreClients()
        guard !appStores.isEmpty else {
            throw CommandFailure("reconciliation needs the App Store Server API: set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY")
        }
        let environments = settings.reconciliationEnvironments(try settings.verifiers())
        let context = try await ServerContext.connect(reader: Bootstrap.reader, logger: logger, listens: false)
        let reconciler = Reconciler(client: context.client, appStores: appStores, environments: environments, sessions: context.sessions)
        print("asking: " + reconciler.scopes.map { "\($0.bundleID) \($0.environment)" }.joined(separator: ", "))
        let run = try await Bootstrap.withRunningClient(context.client) {
            // First the windows of failovers or restores not reconciled yet (database_history), then the one asked for;
            // each runs even when the other failed, and so does each environment.
            await reconciler.reconcile(
                [.init("the window asked for", from: start, to: end, onlyFailures: onlyFailures)], now: end, logger: logger)
        }
        let (history, result, failures) = (run.history, run.windows.first ?? .init(), run.failures)
        if history.listed > 0 {
            print("database history changes: listed \(history.listed) notification(s); appended \(history.appended) lost one(s)")
        }
        print("listed \(result.listed) notification(s); appended \(result.appended) missed one(s) for the workers")
        if let unreachable = result.unreachableSummary {
            print("not asked (older than Apple keeps: 180 days, 30 in the sandbox): \(unreachable)")
        }
        guard failures.isEmpty else {
            for failure in failures { FileHandle.standardError.write(Data("error: \(failure)\n".utf8)) }
            throw ExitCode.failure
        }
    }
}
