package import Logging
package import PostgresNIO

/// Applies numbered SQL migrations, records them in `schema_migrations`, and checks that a
/// database is current.
///
/// Safe when several processes migrate at once, directly or through a transaction-pooling PgBouncer: each
/// migration commits in its own transaction together with its record, under a transaction-scoped advisory lock
/// that serialises migrators. A no-op when current.
/// Because each file runs inside a transaction, a migration cannot use statements that refuse
/// one (`CREATE INDEX CONCURRENTLY`, `VACUUM`).
package struct Migrator: Sendable {
    /// The advisory-lock key all StoreLedger migrators share.
    static let advisoryLockKey: Int64 = 0x5354_4C45_4447_4552  // "STLEDGER"

    /// The migrations this migrator knows, ordered by version.
    package let migrations: [Migration]
    /// The longest a migration waits for one of its locks (`lock_timeout`) before it gives way and tries again.
    package let lockWait: Duration
    /// The pause before trying again a migration that gave way.
    package let lockRetryPause: Duration
    /// How many times a migration is tried before the migrator fails (each try waits at most ``lockWait`` per lock).
    package let lockAttempts: Int

    /// Creates a migrator for `migrations` (by default those bundled with this build).
    ///
    /// A migration that alters a table the service uses (the event log, the queue) needs a lock that conflicts with
    /// every reader and writer of it, and while it waits for a transaction that holds the table (a `pg_dump`, an
    /// analyst's query), every append and claim queues behind it: receivers would answer 503 for as long. So a
    /// migration waits at most `lockWait` for a lock, gives way (rolling back, which releases the queue), pauses
    /// `lockRetryPause` and tries again, `lockAttempts` times in all (by default 3 s, 3 s, 60: about six minutes).
    package init(
        migrations: [Migration], lockWait: Duration = .seconds(3), lockRetryPause: Duration = .seconds(3), lockAttempts: Int = 60
    ) {
        self.migrations = migrations.sorted { $0.version < $1.version }
        self.lockWait = lockWait
        self.lockRetryPause = lockRetryPause
        self.lockAttempts = max(1, lockAttempts)
    }

    /// Where a database stands relative to this build's migrations.
    package struct Status: Sendable, Equatable {
        /// Versions recorded as applied.
        package var applied: [Int]
        /// Known migrations not yet applied, in order.
        package var pending: [Int]
        /// Applied versions this build does not know (the database is ahead).
        package var unknown: [Int]
        /// Applied versions whose SQL has changed since.
        package var changed: [Int]
        /// True when nothing is pending, unknown or changed.
        package var isCurrent: Bool { pending.isEmpty && unknown.isEmpty && changed.isEmpty }
    }

    /// Applies every pending migration and returns the versions it applied (empty when current).
    ///
    /// Each migration is one transaction: it takes the migrators' advisory lock for that transaction only
    /// (`pg_advisory_xact_lock`), reads what is applied, applies the first pending migration and records it, and
    /// commits (or rolls back as a whole). Holding nothing between transactions is what makes this work through a
    /// transaction-pooling PgBouncer, where consecutive statements may reach different server sessions: a session
    /// lock could be taken in one session and "released" in another, and a session's temporary function would not be
    /// found by the next statement.
    @discardableResult
    package func migrate(client: PostgresClient, logger: Logger) async throws -> [Int] {
        var applied: [Int] = []
        var attempt = 1
        var waitingFor: Int?
        while true {
            let version: Int?
            do {
                version = try await applyNext(client: client, logger: logger)
            } catch let gaveWay as GaveWay {
                // Tries are counted per migration (another migrator may have applied the one this one waited for).
                if waitingFor != gaveWay.migration.version { (waitingFor, attempt) = (gaveWay.migration.version, 1) }
                guard attempt < lockAttempts else {
                    throw StoreError(
                        .configuration,
                        "migration \(gaveWay.migration.name) could not take its locks in \(lockAttempts) tries of \(lockWait) each: a "
                            + "long transaction holds a table it changes (see pg_stat_activity and pg_locks); run the migration again when it "
                            + "has ended (\(String(reflecting: gaveWay.error)))")
                }
                logger.warning(
                    "migration gave way: a lock it needs is held; trying again",
                    metadata: ["migration": "\(gaveWay.migration.name)", "attempt": "\(attempt)", "of": "\(lockAttempts)"])
                attempt += 1
                try await Task.sleep(for: lockRetryPause)
                continue
            }
            guard let version else { return applied }
            applied.append(version)
        }
    }

    /// A migration that waited ``lockWait`` for a lock and rolled back, to be tried again.
    private struct GaveWay: Error {
        /// The migration.
        let migration: Migration
        /// The lock timeout's error.
        let error: PSQLError
    }

    /// Applies the first pending migration in its own transaction, under the lock; nil when none is pending.
    private func applyNext(client: PostgresClient, logger: Logger) async throws -> Int? {
        var applying: Migration?
        do {
            return try await client.inTransaction(logger: logger) { connection -> Int? in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))", logger: logger).readToEnd()
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version    integer     PRIMARY KEY,
                        name       text        NOT NULL,
                        checksum   text        NOT NULL,
                        applied_at timestamptz NOT NULL DEFAULT now()
                    )
                    """,
                    logger: logger
                ).readToEnd()
                let status = try await status(connection: connection, logger: logger)
                try Self.refuseIfDiverged(status)
                guard let migration = migrations.first(where: { status.pending.contains($0.version) }) else { return nil }
                applying = migration
                logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
                // The extended protocol takes one statement at a time; PL/pgSQL's EXECUTE runs a whole file. The
                // helper lives in this session's temporary schema and is (re)created in this transaction, so it
                // exists wherever the transaction runs.
                try await connection.query(
                    #"""
                    CREATE OR REPLACE FUNCTION pg_temp.storeledger_run_migration(migration_sql text) RETURNS void
                    LANGUAGE plpgsql AS $run$ BEGIN EXECUTE migration_sql; END $run$
                    """#,
                    logger: logger
                ).readToEnd()
                // Every lock the migration itself takes is waited for at most lockWait (see init); the bookkeeping
                // above waits as long as it must (nothing the service runs holds schema_migrations).
                try await connection.query(
                    "SELECT set_config('lock_timeout', \(TransactionLimits.milliseconds(lockWait)), true)",
                    logger: logger
                ).readToEnd()
                try await connection.query("SELECT pg_temp.storeledger_run_migration(\(migration.sql))", logger: logger).readToEnd()
                try await connection.query(
                    """
                    INSERT INTO schema_migrations (version, name, checksum)
                    VALUES (\(migration.version)::int4, \(migration.name), \(migration.checksum))
                    """,
                    logger: logger
                ).readToEnd()
                return migration.version
            }
        } catch {
            // Errors before a migration was chosen (a diverged schema, the database unreachable) stand as they are.
            guard let migration = applying else { throw error }
            if let error = error as? PSQLError, error.isLockTimeout { throw GaveWay(migration: migration, error: error) }
            throw StoreError(.configuration, "migration \(migration.name) failed: \(String(reflecting: error))")
        }
    }

    /// Reads which migrations the database has applied.
    package func status(client: PostgresClient, logger: Logger) async throws -> Status {
        try await client.withOpenConnection(logger: logger) { try await status(connection: $0, logger: logger) }
    }

    private func status(connection: PostgresConnection, logger: Logger) async throws -> Status {
        let exists = try await connection.query("SELECT to_regclass('schema_migrations') IS NOT NULL", logger: logger)
            .decode(Bool.self).reduce(false) { $1 }
        var recorded: [Int: String] = [:]
        if exists {
            let rows = try await connection.query("SELECT version, checksum FROM schema_migrations", logger: logger)
            for (version, checksum) in try await rows.decode((Int, String).self).readToEnd() { recorded[version] = checksum }
        }
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.version, $0.checksum) })
        return Status(
            applied: recorded.keys.sorted(),
            pending: migrations.map(\.version).filter { recorded[$0] == nil },
            unknown: recorded.keys.filter { known[$0] == nil }.sorted(),
            changed: recorded.compactMap { version, checksum in
                known[version].flatMap { $0 == checksum ? nil : version }
            }.sorted()
        )
    }

    /// Throws a clear ``StoreError`` unless the database is exactly at this build's schema; with `allowingAhead`, a
    /// database that also holds migrations newer than this build (a rollout that migrated first) passes with a
    /// warning, while pending or edited migrations still throw.
    package func requireCurrent(client: PostgresClient, logger: Logger, allowingAhead: Bool = false) async throws {
        try requireCurrent(try await status(client: client, logger: logger), logger: logger, allowingAhead: allowingAhead)
    }

    /// ``requireCurrent(client:logger:allowingAhead:)`` for a status already read.
    package func requireCurrent(_ status: Status, logger: Logger, allowingAhead: Bool = false) throws {
        var status = status
        // Ahead means newer than every migration of this build; an unknown one among them is a diverged schema.
        let newest = migrations.last?.version ?? 0
        if allowingAhead, !status.unknown.isEmpty, status.unknown.allSatisfy({ $0 > newest }) {
            logger.warning(
                "the database has migrations this build does not know; deploy the newer build",
                metadata: ["migrations": "\(status.unknown.map(String.init).joined(separator: ", "))"])
            status.unknown = []
        }
        try Self.refuseIfDiverged(status)
        if !status.pending.isEmpty {
            throw StoreError(
                .schemaBehind,
                "the database schema is behind: migrations \(status.pending.map(String.init).joined(separator: ", ")) are pending; run `storeledger migrate` first"
            )
        }
    }

    private static func refuseIfDiverged(_ status: Status) throws {
        if !status.changed.isEmpty {
            throw StoreError(
                .migrationChanged,
                "applied migrations \(status.changed.map(String.init).joined(separator: ", ")) differ from this build's sql/ files; never edit an applied migration, add a new one"
            )
        }
        if !status.unknown.isEmpty {
            throw StoreError(
                .schemaAhead,
                "the database has migrations \(status.unknown.map(String.init).joined(separator: ", ")) this build does not know; deploy the newer build"
            )
        }
    }
}
