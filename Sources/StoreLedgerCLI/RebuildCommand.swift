import ArgumentParser
import Foundation
import Logging
import StoreLedgerProcessing
import StoreLedgerServer
import StoreLedgerSimulation
import StoreLedgerStore

/// `storeledger rebuild [--dry-run]`: replays the whole event log into shadow tables and swaps them in while
/// receivers and workers keep running.
struct RebuildCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "rebuild",
        abstract: "Rebuild facts and read model from the event log (re-verifying at signedDate) and swap them in without downtime.",
        discussion: """
            With --dry-run, print the rows that would change and exit 3 when any would (0 when the live tables already agree). \
            Add --full-fold to recompute every subscription row from all of its facts with the full fold (no fold state), \
            which checks the incremental fold the workers use: `rebuild --dry-run --full-fold` reports any row it got wrong.
            """
    )

    /// Exit status of a dry run that found differences.
    static let differencesExitCode: Int32 = 3

    @Flag(help: "Compare only: print what would change, swap nothing.")
    var dryRun = false

    @Option(help: "Events per batch.")
    var batchSize = 500

    @Option(help: "Differences to print at most.")
    var show = 50

    @Flag(help: "Refold every touched subscription from all of its facts instead of merging into fold states (slower; a check).")
    var fullFold = false

    @Flag(help: "Trust the development CA too, as `storeledger dev` does (for a database `scripts/dev` filled).")
    var development = false

    @Flag(help: "Go on when events the workers verified no longer verify (e.g. after deliberately removing a trusted root); their facts are dropped.")
    var acceptNewRejections = false

    @Flag(help: "Go on when months of the log were detached for archiving; the facts their events recorded are dropped.")
    var acceptArchivedEvents = false

    /// Checks the numbers.
    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1, not \(batchSize)") }
        guard show >= 0 else { throw ValidationError("--show must be 0 or more, not \(show)") }
    }

    /// Runs the rebuild with the workers' verification settings.
    func run() async throws {
        let context = try await ServerContext.connect(reader: Bootstrap.reader, logger: try Bootstrap.logger("storeledger.rebuild"), listens: false)
        let (client, migrator, logger, settings) = (context.client, context.migrator, context.logger, context.settings)
        let verifiers =
            try development
            ? settings.verifiers(
                defaultBundleID: developmentBundleID, extraRootsDER: try DevelopmentCertificateAuthority.loadOrCreate().trustedRootsDER)
            : settings.verifiers()
        var configured = LedgerHandler(verifiers: verifiers, factCache: context.factCache)
        configured.foldsIncrementally = !fullFold
        let handler = configured
        let report = try await Bootstrap.withRunningClient(client) {
            try await migrator.requireCurrent(client: client, logger: logger)
            return try await Rebuilder(
                client: client, handler: handler, batchSize: batchSize, acceptNewRejections: acceptNewRejections,
                acceptArchivedEvents: acceptArchivedEvents
            ).run(
                dryRun: dryRun, logger: logger, progress: { print($0.line) }
            )
        }
        print("replayed \(report.eventsReplayed) events (\(report.eventsRejected) did not verify and add no facts)")
        for difference in report.differences.prefix(show) {
            print("\(difference.change) \(difference.table) \(difference.key)")
            if let live = difference.live { print("  live:    \(live)") }
            if let rebuilt = difference.rebuilt { print("  rebuilt: \(rebuilt)") }
        }
        // Each table lists at most ShadowSchema.differencesListedPerTable rows: beyond that, the count is a floor.
        let atLeast = report.differencesAreCapped ? "at least " : ""
        if report.differences.count > show { print("… and \(atLeast)\(report.differences.count - show) more") }
        if dryRun {
            print(
                report.differences.isEmpty
                    ? "the live tables agree with the log"
                    : "\(atLeast)\(report.differences.count) row(s) would change"
                        + (atLeast.isEmpty ? "" : " (each table lists at most \(ShadowSchema.differencesListedPerTable))"))
            if !report.differences.isEmpty { throw ExitCode(Self.differencesExitCode) }
        } else {
            let changed = report.rowsChanged.filter { $0.value > 0 }.map { "\($0.key) \($0.value)" }.sorted()
            print(changed.isEmpty ? "swapped: nothing needed changing" : "swapped: " + changed.joined(separator: ", "))
        }
    }
}
