import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// Set-up shared by the operator commands.
enum OperatorContext {
    /// The operator commands' logger (warnings and up, so output stays readable).
    static var logger: Logger {
        var logger = Logger(label: "storeledger.operator")
        logger.logLevel = .warning
        return logger
    }

    /// Checks that an action's `reason` and `by` can be recorded: not empty, the reason at most
    /// ``OperatorStore/maximumReasonLength`` characters (the console asks the same).
    static func checkRecorded(reason: String, by: String) throws {
        guard !reason.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ValidationError("--reason is empty: say why (it is recorded with each event)")
        }
        guard reason.count <= OperatorStore.maximumReasonLength else {
            throw ValidationError("--reason is longer than \(OperatorStore.maximumReasonLength) characters")
        }
        guard !by.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { throw ValidationError("--by is empty: say who is asking") }
    }

    /// Why a requeue or replay (`verb`: "requeued", "replayed") left an event out: what both take.
    static func onlyFinishedEvents(are verb: String) -> String {
        "only finished events (done, rejected, dead) still in the log are \(verb)"
    }

    /// Runs `body` with an operator store over the configured database.
    static func run(_ name: String, _ body: @Sendable (OperatorStore) async throws -> Void) async throws {
        try await Bootstrap.withDatabase("storeledger.\(name)", level: .warning) { client, _ in try await body(OperatorStore(client: client)) }
    }
}
