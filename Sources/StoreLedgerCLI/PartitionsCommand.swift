import ArgumentParser
import Foundation
import Logging
import PostgresNIO
import StoreLedgerStore

/// `storeledger partitions list | ensure [--months-ahead N] | detach --before YYYY-MM [--drop] [--drop-detached]
/// [--accept-parked-events]`.
struct PartitionsCommand: AsyncParsableCommand {
    /// The command's name and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "partitions",
        abstract: "Manage the monthly partitions of the event log: list, create ahead, detach old ones for archiving.",
        subcommands: [List.self, Ensure.self, Detach.self]
    )

    /// `partitions list`.
    struct List: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "List the attached partitions and their rows.")

        /// Prints one line per partition.
        func run() async throws {
            try await PartitionsCommand.withPartitions { partitions, logger in
                for partition in try await partitions.list(logger: logger) { print("\(partition.name)\t\(partition.rows) rows") }
            }
        }
    }

    /// `partitions ensure`.
    struct Ensure: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(
            abstract: "Create the partitions from this month through N months ahead (workers also do this hourly).")

        @Option(help: "How many months ahead (0 to \(EventPartitions.maximumMonthsAhead)).")
        var monthsAhead = 3

        /// Checks the count.
        func validate() throws {
            guard (0...EventPartitions.maximumMonthsAhead).contains(monthsAhead) else {
                throw ValidationError("--months-ahead must be 0 to \(EventPartitions.maximumMonthsAhead), not \(monthsAhead)")
            }
        }

        /// Creates what is missing.
        func run() async throws {
            try await PartitionsCommand.withPartitions { partitions, logger in
                print("created \(try await partitions.ensure(monthsAhead: monthsAhead, logger: logger)) partition(s)")
            }
        }
    }

    /// `partitions detach`.
    struct Detach: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(
            abstract:
                "Detach the months before --before (kept as plain tables to dump and archive, or dropped with --drop); "
                + "--drop-detached drops the tables earlier detaches left, once archived."
        )

        @Option(help: "First month to keep, YYYY-MM (this month or earlier: later months still receive events).")
        var before: String

        @Flag(help: "Drop what this run detaches (only when it needs no archive).")
        var drop = false

        @Flag(help: "Drop the tables earlier detaches left for months before --before (after you archived them).")
        var dropDetached = false

        @Flag(
            help:
                "Detach months holding dead events, or events rejected for this deployment's app or environment, too (they can no longer be requeued once detached)."
        )
        var acceptParkedEvents = false

        /// The month `--before` names.
        func month() throws -> Date {
            let parts = before.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]), let month = Int(parts[1]),
                (1...12).contains(month), let date = Calendar.utc.date(from: DateComponents(year: year, month: month, day: 1))
            else { throw ValidationError("--before \(before) is not YYYY-MM") }
            return date
        }

        /// Checks the month: well formed, and not after this month.
        func validate() throws {
            let month = try month()
            let now = Date()
            guard let thisMonth = Calendar.utc.date(from: Calendar.utc.dateComponents([.year, .month], from: now)), month <= thisMonth else {
                throw ValidationError("--before \(before) is after this month: only months that have ended can be detached")
            }
        }

        /// Detaches and prints the names.
        func run() async throws {
            let month = try month()
            try await PartitionsCommand.withPartitions { partitions, logger in
                func report(_ outcome: EventPartitions.Detachment) {
                    if !outcome.detached.isEmpty { print("detached: " + outcome.detached.joined(separator: ", ")) }
                    if !outcome.dropped.isEmpty { print("dropped: " + outcome.dropped.joined(separator: ", ")) }
                }
                let outcome: EventPartitions.Detachment
                do {
                    outcome = try await partitions.detach(
                        before: month, drop: drop, dropDetached: dropDetached, acceptingParked: acceptParkedEvents, logger: logger)
                } catch let partial as EventPartitions.PartialDetachment {
                    // Done for good before the failure: said before the failure itself, which concerns the next month
                    // only (a database refusal's "nothing of it was changed" would otherwise read as the whole run's).
                    report(partial.done)
                    let cause = (partial.cause as? PSQLError)?.operatorMessage ?? "\(partial.cause)"
                    throw CommandFailure("stopped after the months above, which stay detached; the next one: \(cause)")
                }
                if outcome == .init() { print("nothing to detach") }
                report(outcome)
            }
        }
    }

    /// Runs `body` with the partitions helper over the configured database.
    static func withPartitions(_ body: @Sendable (EventPartitions, Logger) async throws -> Void) async throws {
        try await Bootstrap.withDatabase("storeledger.partitions") { client, logger in try await body(EventPartitions(client: client), logger) }
    }
}
