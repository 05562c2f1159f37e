import Foundation
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Migrations")
struct MigrationTests {
    let migrator = Migrator(migrations: try! Migration.bundled())

    @Test func bundledMigrationsAreNumberedFromOne() throws {
        let versions = migrator.migrations.map(\.version)
        #expect(versions.first == 1)
        #expect(versions == Array(1...versions.count))
    }

    /// A released migration is never edited or renamed (databases recorded its checksum, and the migrator refuses to
    /// start on one that changed): every migration is listed, with its checksum, in Fixtures/released-migrations.txt,
    /// and the bundled ones must match it. A new migration is added to the list when it is written.
    @Test func releasedMigrationsNeverChange() throws {
        let url = try #require(Bundle.module.url(forResource: "Fixtures/released-migrations", withExtension: "txt"))
        var released: [String: String] = [:]
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            released[String(fields[0])] = String(fields[1])
        }
        let bundled = Dictionary(uniqueKeysWithValues: migrator.migrations.map { ($0.name, $0.checksum) })
        for (name, checksum) in released.sorted(by: { $0.key < $1.key }) {
            #expect(bundled[name] == checksum, "released migration \(name) was edited, renamed or removed: write a new migration instead")
        }
        for name in bundled.keys.sorted() where released[name] == nil {
            Issue.record("migration \(name) is not in Fixtures/released-migrations.txt: add it with its checksum")
        }
    }

    /// Checksums stay what databases migrated earlier recorded: SHA-256 of the file's text, lower-case hex.
    @Test func aMigrationsChecksumIsTheSHA256OfItsTextInHex() throws {
        let migration = try Migration(fileName: "0001_abc.sql", sql: "abc")
        #expect(migration.checksum == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func migrateAppliesOnceThenIsANoOp() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            await #expect(throws: StoreError.self) { try await migrator.requireCurrent(client: db.client, logger: db.logger) }
            let first = try await migrator.migrate(client: db.client, logger: db.logger)
            #expect(first == migrator.migrations.map(\.version))
            let second = try await migrator.migrate(client: db.client, logger: db.logger)
            #expect(second.isEmpty)
            try await migrator.requireCurrent(client: db.client, logger: db.logger)
        }
    }

    @Test func concurrentMigratorsApplyEachMigrationExactlyOnce() async throws {
        try await TestDatabase.withFresh(migrated: false, maximumConnections: 8) { db in
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<6 {
                    group.addTask { try await migrator.migrate(client: db.client, logger: db.logger) }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            #expect(applied.sorted() == migrator.migrations.map(\.version))
            #expect(try await db.scalar("SELECT count(*) FROM schema_migrations") == migrator.migrations.count)
        }
    }

    /// Raw bodies and verified payloads are LZ4-compressed where the server has LZ4 (pglz cost the worker most of
    /// PostgreSQL's share), including the event log's partitions, existing and new.
    @Test func payloadColumnsUseLZ4WhereTheServerHasIt() async throws {
        try await TestDatabase.withFresh { db in
            let serverHasLZ4 =
                try await db.scalar(
                    "SELECT count(*) FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)"
                ) == 1
            try await db.client.query(
                "CREATE TABLE events_lz4_probe PARTITION OF events FOR VALUES FROM ('2000-01-01') TO ('2000-02-01')",
                logger: db.logger
            )
            let columns: [(String, String)] = [
                ("events", "body"), ("events_default", "body"), ("events_lz4_probe", "body"),
                ("notifications", "payload"), ("notifications", "transaction_payload"), ("notifications", "renewal_payload"),
                ("transactions", "payload"), ("renewal_infos", "payload"),
            ]
            for (table, column) in columns {
                let lz4 = try await db.scalar(
                    """
                    SELECT count(*) FROM pg_attribute
                    WHERE attrelid = \(table)::regclass AND attname = \(column) AND attcompression = 'l'
                    """
                )
                #expect(lz4 == (serverHasLZ4 ? 1 : 0), "\(table).\(column)")
            }
            let partitionsWithLZ4 = try await db.scalar(
                """
                SELECT count(*) FROM pg_inherits i JOIN pg_attribute a ON a.attrelid = i.inhrelid AND a.attname = 'body'
                WHERE i.inhparent = 'events'::regclass AND a.attcompression = 'l'
                """
            )
            let partitions = try await db.scalar("SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass")
            #expect(partitions >= 2)
            #expect(partitionsWithLZ4 == (serverHasLZ4 ? partitions : 0))
        }
    }

    /// A migration that needs a lock a long transaction holds (a `pg_dump`, an analyst's query on the queue) waits
    /// for it at most its lock wait, then gives way and tries again: while it waited unbounded, every append and claim
    /// queued behind its lock request and the receivers answered 503. Out of tries, it fails with what to do.
    @Test func aMigrationThatCannotTakeItsLocksGivesWayAndTriesAgain() async throws {
        try await TestDatabase.withFresh(maximumConnections: 4) { db in
            let extra = try Migration(
                fileName: "\(migrator.migrations.count + 1)_migration_test.sql", sql: "ALTER TABLE event_queue ADD COLUMN migration_test integer")
            let migrations = migrator.migrations + [extra]
            /// Runs `body`, failing instead of hanging past 30 s: then every statement of this database still waiting
            /// for a lock is cancelled (a query waiting for a lock does not end with its task).
            func bounded<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
                try await withThrowingTaskGroup(of: T?.self) { group in
                    group.addTask { try await body() }
                    group.addTask {
                        try await Task.sleep(for: .seconds(30))
                        try await TestDatabase.withClient(db.url, maximumConnections: 1) { canceller in
                            _ = try await canceller.query(
                                "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                                logger: db.logger
                            ).readToEnd()
                        }
                        return nil
                    }
                    defer { group.cancelAll() }
                    guard let first = try await group.next(), let value = first else { throw StoreError.configuration("timed out") }
                    return value
                }
            }
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { holder in
                try await holder.withConnection { connection in
                    try await connection.query("BEGIN", logger: db.logger).readToEnd()
                    _ = try await connection.query("SELECT count(*) FROM event_queue", logger: db.logger).readToEnd()

                    let impatient = Migrator(migrations: migrations, lockWait: .milliseconds(200), lockRetryPause: .milliseconds(50), lockAttempts: 3)
                    let error = await #expect(throws: StoreError.self) {
                        _ = try await bounded { try await impatient.migrate(client: db.client, logger: db.logger) }
                    }
                    #expect(error?.detail.contains("could not take its locks in 3 tries") == true, "\(String(describing: error))")

                    let patient = Migrator(migrations: migrations, lockWait: .milliseconds(200), lockRetryPause: .milliseconds(50), lockAttempts: 200)
                    let migrating = Task { try await bounded { try await patient.migrate(client: db.client, logger: db.logger) } }
                    try await Task.sleep(for: .milliseconds(300))
                    // The queue stays usable while the migration waits its turn: a read is answered within a lock wait.
                    let clock = ContinuousClock()
                    let started = clock.now
                    _ = try await bounded { try await db.scalar("SELECT count(*) FROM event_queue") }
                    #expect(clock.now - started < .seconds(5))
                    try await connection.query("ROLLBACK", logger: db.logger).readToEnd()
                    #expect(try await migrating.value == [extra.version])
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM information_schema.columns WHERE column_name = 'migration_test'") == 1)
        }
    }

    @Test func schemaBehindIsRefusedWithAClearMessage() async throws {
        try await TestDatabase.withFresh(migrated: false) { db in
            try await Migrator(migrations: Array(migrator.migrations.prefix(1))).migrate(client: db.client, logger: db.logger)
            let error = await #expect(throws: StoreError.self) {
                try await migrator.requireCurrent(client: db.client, logger: db.logger)
            }
            #expect(error?.code == .schemaBehind)
            #expect(error?.detail.contains("storeledger migrate") == true)
        }
    }

    @Test func anEditedAppliedMigrationIsDetected() async throws {
        try await TestDatabase.withFresh { db in
            var edited = migrator.migrations
            edited[0] = try Migration(fileName: "\(edited[0].name).sql", sql: edited[0].sql + "\n-- edited")
            let error = await #expect(throws: StoreError.self) {
                try await Migrator(migrations: edited).requireCurrent(client: db.client, logger: db.logger)
            }
            #expect(error?.code == .migrationChanged)
        }
    }

    @Test func aDatabaseAheadOfThisBuildIsDetected() async throws {
        try await TestDatabase.withFresh { db in
            let error = await #expect(throws: StoreError.self) {
                try await Migrator(migrations: Array(migrator.migrations.dropLast())).requireCurrent(client: db.client, logger: db.logger)
            }
            #expect(error?.code == .schemaAhead)
            // Where a newer schema is tolerated (the receiver), ahead passes; behind still does not, nor an applied
            // migration this build lacks among its own (a diverged schema, not a newer one).
            try await Migrator(migrations: Array(migrator.migrations.dropLast())).requireCurrent(
                client: db.client, logger: db.logger, allowingAhead: true)
            var holed = migrator.migrations
            holed.remove(at: holed.count / 2)
            let diverged = await #expect(throws: StoreError.self) {
                try await Migrator(migrations: holed).requireCurrent(client: db.client, logger: db.logger, allowingAhead: true)
            }
            #expect(diverged?.code == .schemaAhead)
        }
        try await TestDatabase.withFresh(migrated: false) { db in
            let error = await #expect(throws: StoreError.self) {
                try await migrator.requireCurrent(client: db.client, logger: db.logger, allowingAhead: true)
            }
            #expect(error?.code == .schemaBehind)
        }
    }
}
