package import Foundation
package import Logging
package import PostgresNIO

/// The monthly partitions of `events`: create them ahead of time, list them, and detach old ones for archiving
/// (`storeledger partitions`). Detaching is how the append-only log sheds history: never a DELETE.
package struct EventPartitions: Sendable {
    /// One partition.
    package struct Partition: Sendable, Equatable {
        /// The table's name (`events_2026_11`).
        package var name: String
        /// The first month it holds (UTC), nil for the default partition.
        package var month: Date?
        /// Its rows (an estimate for large tables would do; this counts).
        package var rows: Int
    }

    /// The database.
    package let client: PostgresClient

    /// Creates the helper.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Creates the partitions from `from`'s month through `monthsAhead` months later; returns how many were new.
    @discardableResult
    package func ensure(monthsAhead: Int, from: Date = Date(), logger: Logger) async throws -> Int {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                "SELECT storeledger_ensure_event_partitions(\(Int32(monthsAhead))::int4, \(from))", logger: logger
            ).decode(Int32.self).firstAfterReadingAll().map(Int.init) ?? 0
        }
    }

    /// The attached partitions, oldest first (the default partition last).
    package func list(logger: Logger) async throws -> [Partition] {
        var names: [String] = []
        for try await name in try await client.query(
            """
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'events'::regclass ORDER BY c.relname
            """,
            logger: logger
        ).decode(String.self) { names.append(name) }
        var partitions: [Partition] = []
        for name in names {
            var rows = 0
            for try await count in try await client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(name)"), logger: logger).decode(Int.self) {
                rows = count
            }
            partitions.append(Partition(name: name, month: Self.month(of: name), rows: rows))
        }
        return partitions.sorted { ($0.month ?? .distantFuture, $0.name) < ($1.month ?? .distantFuture, $1.name) }
    }

    /// Detaches every monthly partition that ends on or before `before` (a month start), after checking that none
    /// of its events is still waiting or being processed; with `drop`, drops it too (otherwise it stays as a plain
    /// table to dump and archive). Returns the names detached.
    package func detach(before: Date, drop: Bool, logger: Logger) async throws -> [String] {
        var detached: [String] = []
        for partition in try await list(logger: logger) {
            guard let month = partition.month, let end = Calendar.utc.date(byAdding: .month, value: 1, to: month), end <= before else { continue }
            var unfinished = 0
            for try await count in try await client.query(
                """
                SELECT count(*) FROM event_queue WHERE event_received_at >= \(month) AND event_received_at < \(end)
                AND state IN ('pending', 'processing')
                """,
                logger: logger
            ).decode(Int.self) { unfinished = count }
            guard unfinished == 0 else {
                throw StoreError(
                    .configuration, "\(partition.name) still has \(unfinished) unfinished event(s); let the workers finish first")
            }
            try await client.inTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE events DETACH PARTITION \(partition.name)"), logger: logger)
                    .readToEnd()
                if drop {
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(partition.name)"), logger: logger).readToEnd()
                }
            }
            logger.notice(
                "events partition detached", metadata: ["partition": "\(partition.name)", "rows": "\(partition.rows)", "dropped": "\(drop)"])
            detached.append(partition.name)
        }
        return detached
    }

    /// The month a partition named `events_YYYY_MM` holds.
    static func month(of name: String) -> Date? {
        let parts = name.split(separator: "_")
        guard parts.count == 3, parts[0] == "events", let year = Int(parts[1]), let month = Int(parts[2]) else { return nil }
        return Calendar.utc.date(from: DateComponents(year: year, month: month, day: 1))
    }
}

extension Calendar {
    /// The Gregorian calendar in UTC, which partition bounds use.
    package static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }
}
