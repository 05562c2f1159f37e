package import Foundation
package import Logging
import NIOCore
package import PostgresNIO
import StoreLedgerCore

/// The shadow copy of the derived tables that `storeledger rebuild` fills from the event log, and the merge that
/// swaps its contents into the live tables.
///
/// The shadow lives in its own schema with the same table definitions (`LIKE … INCLUDING ALL`). The handler writes
/// into it unchanged, by running with `search_path` set to the shadow schema first, so rebuild and the live worker
/// share every line of processing code.
///
/// The shadow's tables are `UNLOGGED`: a rebuild rewrites its facts, fold states and read model rows over and over
/// (a subscription's fold state once per event), and none of that needs the write-ahead log, because the shadow is
/// scratch: only the merge into the live tables, which are logged, has to survive a crash.
///
/// The shadow holds one row in ``intactTable``: the id of the rebuild that created it. Every batch and the swap check
/// it (``holder(for:on:logger:)``) in their own transactions: a PostgreSQL crash empties unlogged tables (the row is
/// gone), and a second rebuild started meanwhile replaces the shadow with its own (another id). Either way this
/// rebuild must stop, because merging a shadow that does not hold all of its replay would delete live rows.
package enum ShadowSchema {
    /// The schema's name.
    package static let name = "storeledger_rebuild"

    /// The advisory lock a swap holds exclusively for its transaction and a claim takes shared (or, while a swap holds
    /// it, claims nothing).
    package static let swapLockKey: Int64 = 0x5354_4C53_5741_5030  // "STLSWAP0"

    /// The shadow's one-row table naming the rebuild that created it (a crash empties it along with the rest).
    package static let intactTable = "shadow_intact"

    /// Whose shadow the current one is, as one rebuild sees it.
    package enum Holder: Sendable, Equatable {
        /// The rebuild asking: its shadow holds everything it wrote.
        case this
        /// A PostgreSQL crash emptied the shadow's unlogged tables.
        case emptied
        /// Another rebuild replaced the shadow with its own (or finished and dropped it).
        case another
    }

    /// A derived table, its key and the columns that do not take part in comparisons.
    package struct Table: Sendable {
        /// The table's name.
        package var name: String
        /// Its primary key columns.
        package var key: [String]
        /// Bookkeeping columns a rebuild may not reproduce (times of recording).
        package var ignored: [String]
        /// Columns written with a row that changed but not compared: a fold state's version names the write, and a state
        /// the rebuild wrote as it was keeps the live version (processes holding it keep using it).
        package var carried: [String] = []
        /// Whether its rows are compared and reported as differences (a fold state is not: two states may summarise
        /// the same facts differently; it is swapped in with the facts all the same).
        package var reported = true
    }

    /// The tables whose differences a rebuild reports.
    package static var reportedTables: [Table] { tables.filter(\.reported) }

    /// The facts first, then the read model.
    package static let tables: [Table] = [
        Table(name: "notifications", key: ["notification_uuid"], ignored: ["recorded_at"]),
        Table(name: "notification_deliveries", key: ["event_id"], ignored: ["recorded_at"]),
        Table(name: "transactions", key: ["fact_sha256"], ignored: ["recorded_at"]),
        Table(name: "renewal_infos", key: ["fact_sha256"], ignored: ["recorded_at"]),
        Table(name: "subscriptions", key: ["environment", "original_transaction_id"], ignored: ["updated_at"]),
        Table(name: "purchases", key: ["environment", "transaction_id"], ignored: ["updated_at"]),
        Table(
            name: "subscription_fold_states", key: ["environment", "original_transaction_id"], ignored: [], carried: ["state_version"],
            reported: false),
    ]

    /// Drops any earlier shadow (a crashed rebuild's, or a running one's: the later rebuild wins) and creates an empty
    /// one for the rebuild `id`: unlogged tables, and ``intactTable``'s row naming it.
    package static func create(for id: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \(name) CASCADE"), logger: logger)
        try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(name)"), logger: logger)
        for table in tables {
            try await connection.query(
                PostgresQuery(unsafeSQL: "CREATE UNLOGGED TABLE \(name).\(table.name) (LIKE public.\(table.name) INCLUDING ALL)"),
                logger: logger
            )
        }
        try await connection.query(
            PostgresQuery(unsafeSQL: "CREATE UNLOGGED TABLE \(name).\(intactTable) (rebuild_id uuid NOT NULL, created_at timestamptz NOT NULL)"),
            logger: logger
        )
        try await connection.query("INSERT INTO \(unescaped: name).\(unescaped: intactTable) VALUES (\(id), now())", logger: logger)
    }

    /// Whose the current shadow is, from the rebuild `id`'s point of view (read to the end).
    package static func holder(for id: UUID, on connection: PostgresConnection, logger: Logger) async throws -> Holder {
        var exists = false
        for try await present in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT to_regclass('\(name).\(intactTable)') IS NOT NULL"), logger: logger
        ).decode(Bool.self) { exists = present }
        guard exists else { return .another }
        var holders: [UUID] = []
        for try await holder in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT rebuild_id FROM \(name).\(intactTable)"), logger: logger
        ).decode(UUID.self) { holders.append(holder) }
        guard let holder = holders.first else { return .emptied }
        return holder == id ? .this : .another
    }

    /// Drops the shadow unless another rebuild holds it now (its crash-emptied or absent shadow is dropped too).
    package static func drop(ifHeldBy id: UUID, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    DO $$ BEGIN
                        IF to_regclass('\(name).\(intactTable)') IS NULL THEN
                            DROP SCHEMA IF EXISTS \(name) CASCADE;
                        ELSIF NOT EXISTS (SELECT 1 FROM \(name).\(intactTable) WHERE rebuild_id <> '\(id.uuidString)') THEN
                            DROP SCHEMA \(name) CASCADE;
                        END IF;
                    END $$
                    """),
            logger: logger
        )
    }

    /// Makes the rest of the caller's transaction read and write the shadow tables.
    package static func use(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL search_path TO \(name), public"), logger: logger)
    }

    /// Makes the rest of the caller's transaction read and write the live tables again.
    package static func leave(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL search_path TO public"), logger: logger)
    }

    /// Blocks writers of the live derived tables until the caller's transaction ends; readers go on. Claims take
    /// nothing meanwhile (``swapLockKey``), a dry run's comparison included; a batch claimed just before waits.
    package static func lockLiveTables(on connection: PostgresConnection, logger: Logger) async throws {
        // Claims take this lock shared, so while the swap holds it workers claim nothing they would only wait with.
        try await connection.query("SELECT pg_advisory_xact_lock(\(swapLockKey))", logger: logger).readToEnd()
        let list = tables.map { "public.\($0.name)" }.joined(separator: ", ")
        try await connection.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(list) IN SHARE ROW EXCLUSIVE MODE"), logger: logger).readToEnd()
    }

    /// Turns the caller's transaction away while a swap holds (or waits for) the live tables, instead of letting it
    /// wait on their locks: it takes ``swapLockKey`` shared for the transaction, as a claim does, so a swap starting
    /// later waits for it, and throws ``StoreError/Code/rebuildSwapping`` when the lock is not to be had. For writers a
    /// caller waits on (the app-facing API's posts): waiting out a swap, each would hold one of the process's pooled
    /// connections, which the receiver shares, for minutes.
    package static func refuseWhileSwapping(on connection: PostgresConnection, logger: Logger) async throws {
        let free =
            try await connection.query("SELECT pg_try_advisory_xact_lock_shared(\(swapLockKey))", logger: logger)
            .decode(Bool.self).readToEnd().first ?? false
        guard free else {
            throw StoreError(.rebuildSwapping, "a rebuild is swapping the read model in; the transaction was not stored: retry in a few seconds")
        }
    }

    /// One row that differs between live and shadow.
    package struct Difference: Sendable {
        /// The table.
        package var table: String
        /// `added` (only in the rebuild), `removed` (only live) or `changed`.
        package var change: String
        /// The row's key, as JSON.
        package var key: String
        /// The live row without ignored columns, as JSON (nil when added).
        package var live: String?
        /// The rebuilt row without ignored columns, as JSON (nil when removed).
        package var rebuilt: String?

        /// A difference.
        package init(table: String, change: String, key: String, live: String? = nil, rebuilt: String? = nil) {
            self.table = table
            self.change = change
            self.key = key
            self.live = live
            self.rebuilt = rebuilt
        }
    }

    /// How many differing rows ``differences(in:limit:on:logger:)`` lists per table by default.
    package static let differencesListedPerTable = 1000

    /// The rows of `table` that differ between live and shadow (ignoring bookkeeping columns), up to `limit`.
    package static func differences(
        in table: Table, limit: Int = differencesListedPerTable, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Difference] {
        let keyJSON = "jsonb_build_object(" + table.key.map { "'\($0)', t.\($0)" }.joined(separator: ", ") + ")"
        let query: PostgresQuery = """
            WITH l AS (SELECT \(unescaped: keyJSON) AS k, to_jsonb(t) - \(table.ignored)::text[] AS j FROM public.\(unescaped: table.name) t),
                 s AS (SELECT \(unescaped: keyJSON) AS k, to_jsonb(t) - \(table.ignored)::text[] AS j FROM \(unescaped: name).\(unescaped: table.name) t)
            SELECT CASE WHEN l.k IS NULL THEN 'added' WHEN s.k IS NULL THEN 'removed' ELSE 'changed' END,
                   coalesce(l.k, s.k)::text, l.j::text, s.j::text
            FROM l FULL JOIN s ON l.k = s.k
            WHERE l.j IS DISTINCT FROM s.j
            ORDER BY 2
            LIMIT \(limit)
            """
        var result: [Difference] = []
        for try await (change, key, live, rebuilt) in try await connection.query(query, logger: logger)
            .decode((String, String, String?, String?).self)
        {
            result.append(Difference(table: table.name, change: change, key: key, live: live, rebuilt: rebuilt))
        }
        return result
    }

    /// Verified facts the live tables hold and the shadow does not: what ``mergeIntoLive(on:logger:)`` would delete.
    package struct RemovedFacts: Sendable, Equatable {
        /// Facts (deliveries, transactions, renewal infos) whose recording event the log no longer holds: its month was
        /// detached for archiving.
        package var ofArchivedEvents = 0
        /// Facts whose recording event is in the log, which this rebuild did not verify (a trust or app configuration
        /// that differs from the workers').
        package var ofLoggedEvents = 0
        /// The lowest such logged event, to name one.
        package var firstLoggedEvent: Int64?

        /// Creates a count.
        package init(ofArchivedEvents: Int = 0, ofLoggedEvents: Int = 0, firstLoggedEvent: Int64? = nil) {
            self.ofArchivedEvents = ofArchivedEvents
            self.ofLoggedEvents = ofLoggedEvents
            self.firstLoggedEvent = firstLoggedEvent
        }
    }

    /// Counts the verified facts the merge would delete (a delivery by its event, a transaction or renewal info by the
    /// first event that recorded it), read from the ledger itself: unlike the queue's `done` rows, which operators
    /// prune, the fact tables say what was verified. Run it inside the swap's transaction, after the tail's replay.
    package static func factsTheMergeWouldRemove(on connection: PostgresConnection, logger: Logger) async throws -> RemovedFacts {
        var removed = RemovedFacts()
        for try await (archived, logged, first) in try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH removed AS (
                        SELECT d.event_id FROM public.notification_deliveries d
                        WHERE NOT EXISTS (SELECT 1 FROM \(name).notification_deliveries s WHERE s.event_id = d.event_id)
                        UNION ALL
                        SELECT t.first_event_id FROM public.transactions t
                        WHERE NOT EXISTS (SELECT 1 FROM \(name).transactions s WHERE s.fact_sha256 = t.fact_sha256)
                        UNION ALL
                        SELECT r.first_event_id FROM public.renewal_infos r
                        WHERE NOT EXISTS (SELECT 1 FROM \(name).renewal_infos s WHERE s.fact_sha256 = r.fact_sha256)
                    ), judged AS (
                        SELECT removed.event_id, EXISTS (SELECT 1 FROM events e WHERE e.id = removed.event_id) AS logged FROM removed
                    )
                    SELECT count(*) FILTER (WHERE NOT logged), count(*) FILTER (WHERE logged), min(event_id) FILTER (WHERE logged)
                    FROM judged
                    """),
            logger: logger
        ).decode((Int, Int, Int64?).self) {
            removed = RemovedFacts(ofArchivedEvents: archived, ofLoggedEvents: logged, firstLoggedEvent: first)
        }
        return removed
    }

    /// Makes each live table equal to its shadow (ignoring bookkeeping columns), writing only rows that differ;
    /// returns how many rows changed per reported table. Run it inside the transaction that locked the live tables.
    package static func mergeIntoLive(on connection: PostgresConnection, logger: Logger) async throws -> [String: Int] {
        var changed: [String: Int] = [:]
        // Children before parents for deletes (deliveries reference notifications), parents first for inserts.
        for table in tables.reversed() {
            let join = table.key.map { "s.\($0) = t.\($0)" }.joined(separator: " AND ")
            var count = 0
            for try await deleted in try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        WITH gone AS (
                            DELETE FROM public.\(table.name) t WHERE NOT EXISTS (SELECT 1 FROM \(name).\(table.name) s WHERE \(join))
                            RETURNING 1
                        ) SELECT count(*) FROM gone
                        """),
                logger: logger
            ).decode(Int.self) { count = deleted }
            if table.reported { changed[table.name] = count }
        }
        for table in tables {
            let columns = try await writableColumns(of: table.name, on: connection, logger: logger)
            let compared = columns.filter { !table.ignored.contains($0) && !table.carried.contains($0) && !table.key.contains($0) }
            let list = columns.joined(separator: ", ")
            let update =
                compared.isEmpty
                ? "DO NOTHING"
                : "DO UPDATE SET " + (compared + table.carried).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
                    + " WHERE (" + compared.map { "t.\($0)" }.joined(separator: ", ") + ") IS DISTINCT FROM ("
                    + compared.map { "excluded.\($0)" }.joined(separator: ", ") + ")"
            for try await written in try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        WITH written AS (
                            INSERT INTO public.\(table.name) AS t (\(list))
                            SELECT \(list) FROM \(name).\(table.name)
                            ON CONFLICT (\(table.key.joined(separator: ", "))) \(update)
                            RETURNING 1
                        ) SELECT count(*) FROM written
                        """),
                logger: logger
            ).decode(Int.self) where table.reported { changed[table.name, default: 0] += written }
        }
        // The console's chart snapshot was taken from what the merge just changed, and no event arrived to say so.
        try await ChartStore.markOutOfDate(on: connection, logger: logger)
        return changed
    }

    /// The columns of a public table that can be written (not generated).
    private static func writableColumns(of table: String, on connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var columns: [String] = []
        for try await column in try await connection.query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name = \(table) AND is_generated = 'NEVER'
            ORDER BY ordinal_position
            """,
            logger: logger
        ).decode(String.self) { columns.append(column) }
        return columns
    }
}
