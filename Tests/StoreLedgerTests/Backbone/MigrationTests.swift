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
        }
    }
}
