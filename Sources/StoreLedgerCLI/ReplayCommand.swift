import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// `storeledger replay --from X --to Y`: reprocess finished events in a range of ids or receive times.
struct ReplayCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Reprocess finished events by id range or receive time (idempotent: nothing changes unless the code did).",
        discussion: "--from and --to take event ids (inclusive) or RFC 3339 times ([from, to))."
    )

    @Option(help: "First event id, or a time like 2026-11-01T00:00:00Z.")
    var from: String

    @Option(help: "Last event id (inclusive), or an end time (exclusive).")
    var to: String

    @Option(help: "Why (recorded with each event).")
    var reason: String = "replay"

    @Option(help: "Who is asking (default: $USER).")
    var by: String = ProcessInfo.processInfo.environment["USER"] ?? "operator"

    /// The selection the bounds describe.
    func selection() throws -> OperatorStore.Selection {
        if let low = Int64(from), let high = Int64(to) {
            guard low <= high else { throw ValidationError("--from \(from) is after --to \(to)") }
            return .idRange(low...high)
        }
        guard let start = RFC3339.date(from: from), let end = RFC3339.date(from: to) else {
            throw ValidationError(
                "--from \(from) and --to \(to) must both be event ids or both RFC 3339 times with a zone (2026-11-01T00:00:00Z)")
        }
        guard start < end else { throw ValidationError("--from \(from) is not before --to \(to)") }
        return .receivedBetween(start, end)
    }

    /// Checks the bounds, the reason and the name.
    func validate() throws {
        _ = try selection()
        try OperatorContext.checkRecorded(reason: reason, by: by)
    }

    /// Requeues the range and prints how many.
    func run() async throws {
        let selection = try selection()
        try await OperatorContext.run("replay") { store in
            let count = try await store.requeue(selection, action: "replay", by: by, reason: reason, logger: OperatorContext.logger)
            print("replaying \(count) event(s); workers will process them")
            if count == 0 {
                FileHandle.standardError.write(Data("nothing matched: \(OperatorContext.onlyFinishedEvents(are: "replayed"))\n".utf8))
            }
        }
    }
}
