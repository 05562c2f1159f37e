import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// `storeledger stats`: queue depth by state, oldest pending age, throughput over the last minute, and parked
/// events by reason.
struct StatsCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Show the queue: depth, age, throughput, parked events by reason.")

    @Flag(help: "Print JSON instead of text.")
    var json = false

    /// Prints the snapshot.
    func run() async throws {
        try await OperatorContext.run("stats") { store in
            let stats = try await store.statistics(logger: OperatorContext.logger)
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(stats), as: UTF8.self))
                return
            }
            let approximate = { (state: QueueState) in state == .done && stats.doneIsEstimated ? "~" : "" }
            print(
                "queue: " + QueueState.allCases.map { "\($0.rawValue) \(approximate($0))\(stats.depth[$0.rawValue] ?? 0)" }.joined(separator: ", "))
            print("oldest pending: " + (stats.oldestPendingAgeSeconds.map { String(format: "%.1f s", $0) } ?? "none"))
            print("oldest requeued: " + (stats.oldestRequeuedAgeSeconds.map { String(format: "%.1f s", $0) } ?? "none"))
            print("oldest unfinished: " + (stats.oldestUnfinishedAgeSeconds.map { String(format: "%.1f s", $0) } ?? "none"))
            print(String(format: "NOTIFY queue: %.1f %% full", stats.notifyQueueUsage * 100))
            print("last minute: \(stats.receivedLastMinute) received, \(stats.finishedLastMinute) finished")
            for (title, classes) in [("rejected", stats.rejectedByReason), ("dead", stats.deadByError)] where !classes.isEmpty {
                print("\(title) by reason:")
                for (reason, count) in classes.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) { print("  \(count)\t\(reason)") }
            }
        }
    }
}
