public import Logging
public import PostgresNIO

/// Applies numbered SQL migrations, records them in `schema_migrations`, and checks that a
/// database is current.
///
/// Safe when several processes migrate at once: the work runs under a session advisory lock, and
/// each migration commits in its own transaction together with its record. A no-op when current.
/// Because each file runs inside a transaction, a migration cannot use statements that refuse
/// one (`CREATE INDEX CONCURRENTLY`, `VACUUM`).
public struct Migrator: Sendable {
    /// The advisory-lock key all StoreLedger migrators share.
    static let advisoryLockKey: Int64 = 0x5354_4C45_4447_4552  // "STLEDGER"

    /// The migrations this migrator knows, ordered by version.
    public let migrations: [Migration]

    /// Creates a migrator for `migrations` (by default those bundled with this build).
    public init(migrations: [Migration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Where a database stands relative to this build's migrations.
    public struct Status: Sendable, Equatable {
        /// Versions recorded as applied.
        public var applied: [Int]
        /// Known migrations not yet applied, in order.
        public var pending: [Int]
        /// Applied versions this build does not know (the database is ahead).
        public var unknown: [Int]
        /// Applied versions whose SQL has changed since.
        public var changed: [Int]
        /// True when nothing is pending, unknown or changed.
        public var isCurrent: Bool { pending.isEmpty && unknown.isEmpty && changed.isEmpty }
    }

    /// Applies every pending migration and returns the versions it applied (empty when current).
    @discardableResult
    public func migrate(client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.query("SELECT pg_advisory_lock(\(Self.advisoryLockKey))", logger: logger)
            do {
                let applied = try await migrateLocked(connection: connection, logger: logger)
                try await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                return applied
            } catch {
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.advisoryLockKey))", logger: logger)
                throw error
            }
        }
    }

    private func migrateLocked(connection: PostgresConnection, logger: Logger) async throws -> [Int] {
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
        )
        let status = try await status(connection: connection, logger: logger)
        try Self.refuseIfDiverged(status)
        guard !status.pending.isEmpty else { return [] }
        // The extended protocol takes one statement at a time; PL/pgSQL's EXECUTE runs a whole
        // file. A session-local helper keeps nothing behind in the schema.
        try await connection.query(
            #"""
            CREATE OR REPLACE FUNCTION pg_temp.storeledger_run_migration(migration_sql text) RETURNS void
            LANGUAGE plpgsql AS $run$ BEGIN EXECUTE migration_sql; END $run$
            """#,
            logger: logger
        )
        var applied: [Int] = []
        for migration in migrations where status.pending.contains(migration.version) {
            logger.info("applying migration", metadata: ["migration": "\(migration.name)"])
            do {
                // Applied and recorded together, or neither (the COMMIT's answer is checked).
                try await connection.inTransaction(logger: logger) { connection in
                    try await connection.query("SELECT pg_temp.storeledger_run_migration(\(migration.sql))", logger: logger).readToEnd()
                    try await connection.query(
                        """
                        INSERT INTO schema_migrations (version, name, checksum)
                        VALUES (\(migration.version)::int4, \(migration.name), \(migration.checksum))
                        """,
                        logger: logger
                    ).readToEnd()
                }
            } catch {
                throw StoreError(
                    code: .configuration,
                    detail: "migration \(migration.name) failed: \(String(reflecting: error))"
                )
            }
            applied.append(migration.version)
        }
        return applied
    }

    /// Reads which migrations the database has applied.
    public func status(client: PostgresClient, logger: Logger) async throws -> Status {
        try await client.withConnection { try await status(connection: $0, logger: logger) }
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

    /// Throws a clear ``StoreError`` unless the database is exactly at this build's schema.
    public func requireCurrent(client: PostgresClient, logger: Logger) async throws {
        let status = try await status(client: client, logger: logger)
        try Self.refuseIfDiverged(status)
        if !status.pending.isEmpty {
            throw StoreError(
                code: .schemaBehind,
                detail: "the database schema is behind: migrations \(status.pending.map(String.init).joined(separator: ", ")) are pending; run `storeledger migrate` first"
            )
        }
    }

    private static func refuseIfDiverged(_ status: Status) throws {
        if !status.changed.isEmpty {
            throw StoreError(
                code: .migrationChanged,
                detail: "applied migrations \(status.changed.map(String.init).joined(separator: ", ")) differ from this build's sql/ files; never edit an applied migration, add a new one"
            )
        }
        if !status.unknown.isEmpty {
            throw StoreError(
                code: .schemaAhead,
                detail: "the database has migrations \(status.unknown.map(String.init).joined(separator: ", ")) this build does not know; deploy the newer build"
            )
        }
    }
}
