import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// `storeledger inspect EVENT_ID`: the raw body, the decoded payload, and the event's processing history.
struct InspectCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "inspect", abstract: "Show one event: raw body, decoded payload, processing history.")

    @Argument(help: "The event id.")
    var eventID: Int64

    /// Prints the event (what is left of it when its month was detached or its queue row pruned); exits 1 when
    /// neither the log nor the queue knows it.
    func run() async throws {
        try await OperatorContext.run("inspect") { store in
            guard let event = try await store.inspect(eventID, logger: OperatorContext.logger) else {
                FileHandle.standardError.write(Data("no event \(eventID)\n".utf8))
                throw ExitCode(1)
            }
            let formatter = ISO8601DateFormatter()
            print("event \(event.id): \(event.source ?? "-") via \(event.route ?? "-") at \(formatter.string(from: event.receivedAt))")
            print("  environment hint: \(event.environmentHint ?? "-"), request id: \(event.requestID ?? "-"), user: \(event.userID ?? "-")")
            if let state = event.state {
                print(
                    "  state: \(state) after \(event.attempts) attempt(s)"
                        + (event.finishedAt.map { ", finished \(formatter.string(from: $0))" } ?? ""))
            } else {
                print("  state: unknown: its queue row was deleted (finished rows pruned); the log still holds it")
            }
            if let reason = event.rejectReason { print("  rejected: \(reason)") }
            if let error = event.lastError, event.rejectReason == nil { print("  last error: \(error)") }
            if let uuid = event.notificationUUID { print("  notification: \(uuid)") }
            for failure in event.failures {
                print(
                    "  attempt \(failure.attempt) \(failure.outcome) at \(formatter.string(from: failure.failedAt)) on \(failure.worker ?? "-"): \(failure.error)"
                )
            }
            for action in event.actions {
                print(
                    "  \(action.action) from \(action.previousState) by \(action.requestedBy) at \(formatter.string(from: action.performedAt)): \(action.reason)"
                )
            }
            guard let raw = event.body else {
                print("raw body: not in the log: the month it was received in was detached for archiving (attach it again to read it)")
                return
            }
            let body = String(decoding: raw.readableBytesView, as: UTF8.self)
            print("raw body (\(raw.readableBytes) bytes):")
            print(body)
            if let decoded = SignedDataInspector.decodedWithoutVerifying(body) {
                print("decoded payload (not verified by this command; the state above says whether the worker verified it):")
                print(String(decoding: decoded, as: UTF8.self))
            }
        }
    }
}
