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

    /// Prints the event; exits 1 when there is no such event.
    func run() async throws {
        try await OperatorContext.run("inspect") { store in
            guard let event = try await store.inspect(eventID, logger: OperatorContext.logger) else {
                FileHandle.standardError.write(Data("no event \(eventID)\n".utf8))
                throw ExitCode(1)
            }
            let formatter = ISO8601DateFormatter()
            print("event \(event.id): \(event.source) via \(event.route ?? "-") at \(formatter.string(from: event.receivedAt))")
            print("  environment hint: \(event.environmentHint ?? "-"), request id: \(event.requestID ?? "-"), user: \(event.userID ?? "-")")
            print(
                "  state: \(event.state) after \(event.attempts) attempt(s)"
                    + (event.finishedAt.map { ", finished \(formatter.string(from: $0))" } ?? ""))
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
            let body = String(decoding: event.body.readableBytesView, as: UTF8.self)
            print("raw body (\(event.body.readableBytes) bytes):")
            print(body)
            if let decoded = SignedDataInspector.decodedWithoutVerifying(body) {
                print("decoded payload (not verified by this command; the state above says whether the worker verified it):")
                print(String(decoding: decoded, as: UTF8.self))
            }
        }
    }
}
