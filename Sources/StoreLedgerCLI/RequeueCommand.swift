import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// `storeledger requeue (--dead | --rejected REASON | EVENT_ID…) --reason WHY`: put parked events back to work.
struct RequeueCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "requeue",
        abstract: "Make dead, rejected or given events pending again (with a fresh attempt budget); records who and why."
    )

    @Flag(help: "Every dead event.")
    var dead = false

    @Option(help: "Rejected events whose reason starts with this (e.g. 'untrustedChain', 'wrongEnvironment'; '' for all rejected).")
    var rejected: String?

    @Argument(help: ArgumentHelp("Event ids (finished events only).", valueName: "event-id"))
    var eventIDs: [Int64] = []

    @Option(help: "Why (recorded with each event).")
    var reason: String

    @Option(help: "Who is asking (default: $USER).")
    var by: String = ProcessInfo.processInfo.environment["USER"] ?? "operator"

    /// Exactly one selection, and a reason and a name that can be recorded.
    func validate() throws {
        let chosen = (dead ? 1 : 0) + (rejected != nil ? 1 : 0) + (eventIDs.isEmpty ? 0 : 1)
        guard chosen == 1 else { throw ValidationError("choose exactly one of --dead, --rejected REASON, or event ids") }
        try OperatorContext.checkRecorded(reason: reason, by: by)
    }

    /// Requeues and prints how many.
    func run() async throws {
        let selection: OperatorStore.Selection = dead ? .dead : rejected.map { .rejected(reasonPrefix: $0) } ?? .ids(eventIDs)
        try await OperatorContext.run("requeue") { store in
            let count = try await store.requeue(selection, by: by, reason: reason, logger: OperatorContext.logger)
            let named = Set(eventIDs).count
            let why = OperatorContext.onlyFinishedEvents(are: "requeued")
            // Events named by id that were not requeued are a failure to do what was asked, as "nothing by that name" is.
            if named > 0, count == 0 {
                throw CommandFailure("none of the \(named) named event(s) was requeued: \(why) (see `storeledger inspect ID`)")
            }
            print("requeued \(count) event(s)")
            if named > count {
                FileHandle.standardError.write(Data("\(named - count) of the named event(s) were not requeued: \(why)\n".utf8))
            } else if count == 0 {
                FileHandle.standardError.write(Data("nothing matched: \(why)\n".utf8))
            }
        }
    }
}
