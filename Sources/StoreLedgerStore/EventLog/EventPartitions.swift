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
    /// The most months ``ensure(monthsAhead:from:logger:)`` creates ahead (ten years).
    package static let maximumMonthsAhead = 120

    /// How long creating partitions waits for the log's lock (appends queue behind a waiting lock).
    package let creationLockWait: Duration
    /// How long a detach waits for the log's lock.
    package let detachLockWait: Duration

    /// Creates the helper; the lock waits default to 1 s for creating partitions and 5 s for detaching.
    package init(client: PostgresClient, creationLockWait: Duration = .seconds(1), detachLockWait: Duration = .seconds(5)) {
        self.client = client
        self.creationLockWait = creationLockWait
        self.detachLockWait = detachLockWait
    }

    /// Creates the partitions from `from`'s month (by default the database's current month) through `monthsAhead`
    /// months later; returns how many were new.
    @discardableResult
    package func ensure(monthsAhead: Int, from: Date? = nil, logger: Logger) async throws -> Int {
        guard (0...Self.maximumMonthsAhead).contains(monthsAhead) else {
            throw StoreError(.configuration, "months ahead must be 0 to \(Self.maximumMonthsAhead), not \(monthsAhead)")
        }
        // Creating a partition locks the whole log, and every append waits behind that lock while it waits: a short
        // wait, then a later try (partitions are made months ahead), rather than receivers answering 503.
        return try await withLogLock(waitingAtMost: creationLockWait, toDo: "the partitions ahead were not created", logger: logger) {
            connection in
            // A new partition's range is checked against the default partition's rows by a scan, under the log's lock:
            // bounded, so a large default (a month left out, migration 0034) cannot hold the appends for long.
            try await connection.query("SET LOCAL statement_timeout = '10s'", logger: logger).readToEnd()
            return try await connection.query(
                "SELECT storeledger_ensure_event_partitions(\(Int32(monthsAhead))::int4, coalesce(\(from)::timestamptz, now()))", logger: logger
            ).decode(Int32.self).firstAfterReadingAll().map(Int.init) ?? 0
        }
    }

    /// Whether `events_default` holds any event: a month whose partition was not created in time (no worker ran through
    /// the months made ahead). Its events are stored and processed like any other, but that month never gets a
    /// partition of its own (PostgreSQL refuses one for a range the default holds rows of; later months still get
    /// theirs: migration 0034), so retaining or archiving it takes an operator (docs/operations.md, "The event log").
    package func defaultPartitionHoldsEvents(logger: Logger) async throws -> Bool {
        try await client.rows("SELECT EXISTS (SELECT 1 FROM events_default)", logger: logger).decode(Bool.self).first ?? false
    }

    /// Runs `body` in a transaction whose lock waits last at most `wait`; a wait that runs out is a
    /// ``StoreError/Kind/unavailable`` saying `what` did not happen and why.
    private func withLogLock<Result>(
        waitingAtMost wait: Duration, toDo what: String, logger: Logger, isolation: isolated (any Actor)? = #isolation,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> sending Result {
        let milliseconds = Int(wait.components.seconds * 1_000)
        do {
            return try await client.inTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL lock_timeout = \(milliseconds)"), logger: logger).readToEnd()
                return try await body(connection)
            }
        } catch let error as PSQLError where error.isLockTimeout {
            throw StoreError(
                .unavailable, "\(what): the log's lock was not free within \(wait.components.seconds) s (a long transaction?); try again")
        }
    }

    /// The attached partitions, oldest first (the default partition last).
    package func list(logger: Logger) async throws -> [Partition] {
        var names: [String] = []
        for name in try await client.rows(
            """
            SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'events'::regclass ORDER BY c.relname
            """,
            logger: logger
        ).decode(String.self) { names.append(name) }
        var partitions: [Partition] = []
        for name in names {
            var rows = 0
            for count in try await client.rows(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(name)"), logger: logger).decode(Int.self) {
                rows = count
            }
            partitions.append(Partition(name: name, month: Self.month(of: name), rows: rows))
        }
        return partitions.sorted { ($0.month ?? .distantFuture, $0.name) < ($1.month ?? .distantFuture, $1.name) }
    }

    /// Detaches every monthly partition that ends on or before `before` (a month start, no later than the start of the
    /// database's current month, UTC: the current and later months still receive events). A month with events still
    /// waiting or being processed is refused: counted first, and again under the detach's lock in its transaction
    /// (which waits at most 5 s for that lock, since every append waits behind it). With `drop`, what this run detaches
    /// is dropped too (otherwise it stays as a plain table to dump and archive); with `dropDetached`, the monthly tables
    /// before `before` that earlier runs detached are dropped (after you archived them). A month holding dead events, or
    /// events rejected for the deployment's app or environment settings, is refused too unless `acceptingParked`:
    /// `requeue` brings such events back only while their bodies are in the log, and Apple does not resend what it got a
    /// 200 for. Returns the names detached and the names dropped.
    package func detach(
        before: Date, drop: Bool, dropDetached: Bool = false, acceptingParked: Bool = false, logger: Logger
    ) async throws -> Detachment {
        let thisMonth =
            try await client.rows("SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'", logger: logger)
            .decode(Date.self).first ?? Date()
        guard before <= thisMonth else {
            throw StoreError(
                .configuration,
                "only months that have ended can be detached: the month before which to detach must be this month or earlier "
                    + "(this month and the ones ahead still receive events)")
        }
        // Read before this run detaches anything: what this run detaches without `drop` is left to be archived.
        let leftovers = dropDetached ? try await detachedTables(logger: logger) : []
        var outcome = Detachment()
        do {
            try await detachMonths(
                before: before, drop: drop, dropDetached: dropDetached, leftovers: leftovers, acceptingParked: acceptingParked,
                into: &outcome, logger: logger)
        } catch {
            // Each month commits on its own: what went before the failure is done, and the caller must say so.
            guard outcome == .init() else { throw PartialDetachment(done: outcome, cause: error) }
            throw error
        }
        return outcome
    }

    /// Thrown by ``detach(before:drop:dropDetached:acceptingParked:logger:)`` when a month fails after earlier ones were
    /// detached (and perhaps dropped) for good: what was done, and why it stopped.
    package struct PartialDetachment: Error, CustomStringConvertible {
        /// What was detached and dropped before the failure.
        package var done: Detachment
        /// Why the rest was not.
        package var cause: any Error
        /// Says both.
        package var description: String { "stopped after detaching \(done.detached) and dropping \(done.dropped): \(cause)" }
    }

    /// The months and leftovers of one ``detach(before:drop:dropDetached:acceptingParked:logger:)``, each recorded in
    /// `outcome` once committed.
    private func detachMonths(
        before: Date, drop: Bool, dropDetached: Bool, leftovers: [String], acceptingParked: Bool, into outcome: inout Detachment,
        logger: Logger
    ) async throws {
        for partition in try await list(logger: logger) {
            guard let month = partition.month, let end = Self.end(of: month), end <= before else { continue }
            func refuseUnfinished(on connection: PostgresConnection) async throws {
                let unfinished = try await Self.unfinishedEvents(from: month, to: end, on: connection, logger: logger)
                guard unfinished == 0 else {
                    throw StoreError(.configuration, "\(partition.name) still has \(unfinished) unfinished event(s); let the workers finish first")
                }
                guard !acceptingParked else { return }
                let parked = try await Self.parkedEvents(from: month, to: end, on: connection, logger: logger)
                guard parked == 0 else {
                    throw StoreError(
                        .configuration,
                        "\(partition.name) holds \(parked) dead event(s) or event(s) rejected for this deployment's app or environment "
                            + "settings, which `storeledger requeue` can bring back only while their bodies are in the log (Apple does not "
                            + "resend them): look at them (the console's queue page, `storeledger inspect`), requeue what a fix lets "
                            + "through, then detach, or detach anyway with --accept-parked-events")
                }
            }
            try await client.withOpenConnection(logger: logger) { try await refuseUnfinished(on: $0) }
            try await withLogLock(waitingAtMost: detachLockWait, toDo: "\(partition.name) was not detached", logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "ALTER TABLE events DETACH PARTITION \(partition.name)"), logger: logger)
                    .readToEnd()
                // Counted again under the lock, which keeps the count true until the commit.
                try await refuseUnfinished(on: connection)
                if drop {
                    try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(partition.name)"), logger: logger).readToEnd()
                }
            }
            logger.notice(
                "events partition detached", metadata: ["partition": "\(partition.name)", "rows": "\(partition.rows)", "dropped": "\(drop)"])
            outcome.detached.append(partition.name)
            if drop { outcome.dropped.append(partition.name) }
        }
        for name in leftovers {
            guard let end = Self.month(of: name).flatMap(Self.end(of:)), end <= before else { continue }
            try await client.inTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(name)"), logger: logger).readToEnd()
            }
            logger.notice("detached events table dropped", metadata: ["table": "\(name)"])
            outcome.dropped.append(name)
        }
    }

    /// What ``detach(before:drop:dropDetached:acceptingParked:logger:)`` did.
    package struct Detachment: Sendable, Equatable {
        /// The monthly partitions this run detached, oldest first.
        package var detached: [String] = []
        /// The tables it dropped: those it detached with `drop`, then those earlier runs left (`dropDetached`).
        package var dropped: [String] = []

        /// An outcome; nothing detached or dropped by default.
        package init(detached: [String] = [], dropped: [String] = []) {
            self.detached = detached
            self.dropped = dropped
        }
    }

    /// How many events received in `[from, to)` are still waiting or being processed (the two states' own indexes).
    private static func unfinishedEvents(from: Date, to: Date, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await connection.query(
            """
            SELECT count(*) FROM event_queue
            WHERE (state = 'pending' OR state = 'processing') AND event_received_at >= \(from) AND event_received_at < \(to)
            """,
            logger: logger
        ).decode(Int.self).firstAfterReadingAll() ?? 0
    }

    /// How many events received in `[from, to)` are parked and may still be worth requeueing (the parked index): dead
    /// ones (retries ran out), and those rejected for the deployment's settings (`wrongApp`, `wrongEnvironment`: a
    /// corrected setting lets them through, as migration 0013 did). Events rejected for their bytes (malformed, a bad
    /// signature or chain: anyone can post such a body) never pass and do not hold a month back.
    private static func parkedEvents(from: Date, to: Date, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await connection.query(
            """
            SELECT count(*) FROM event_queue
            WHERE state IN ('rejected', 'dead') AND event_received_at >= \(from) AND event_received_at < \(to)
              AND (state = 'dead' OR reject_reason LIKE 'wrongApp%' OR reject_reason LIKE 'wrongEnvironment%')
            """,
            logger: logger
        ).decode(Int.self).firstAfterReadingAll() ?? 0
    }

    /// The monthly tables (`events_YYYY_MM`) an earlier detach left as plain tables, oldest first.
    package func detachedTables(logger: Logger) async throws -> [String] {
        try await client.rows(
            """
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT c.relispartition AND c.relname ~ '^events_[0-9]{4}_[0-9]{2}$'
            ORDER BY c.relname
            """,
            logger: logger
        ).decode(String.self)
    }

    /// Where the month starting at `month` ends: the next month's start (UTC).
    static func end(of month: Date) -> Date? { Calendar.utc.date(byAdding: .month, value: 1, to: month) }

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
