import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// A transaction whose success is reported (an acknowledgement to Apple above all) commits durably whatever
/// `synchronous_commit` the role, database or server sets: `off` becomes `on` for the transaction alone, a setting
/// that already flushes locally stays as it is.
@Suite("Faults: durable commits")
struct DurableCommitTests {
    @Test(arguments: [("off", "on"), ("local", "local"), ("remote_apply", "remote_apply"), ("on", "on")])
    func aTransactionCommitsDurablyWhateverTheDatabaseSets(_ configured: String, _ expected: String) async throws {
        try await TestDatabase.withFresh { db in
            try await db.client.query(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = %L', current_database(), '\(unescaped: configured)'); END $$",
                logger: db.logger
            ).readToEnd()
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                func setting(limits: TransactionLimits?) async throws -> String? {
                    try await client.inTransaction(logger: db.logger, limits: limits) { connection in
                        try await connection.query("SELECT current_setting('synchronous_commit')", logger: db.logger)
                            .decode(String.self).readToEnd().first
                    }
                }
                #expect(try await setting(limits: nil) == expected)
                #expect(try await setting(limits: TransactionLimits(lease: .seconds(30))) == expected)
                // The transaction's own: the session (behind a transaction pooler, anyone's next) keeps what was set.
                let after = try await client.query("SELECT current_setting('synchronous_commit')", logger: db.logger)
                    .decode(String.self).readToEnd().first
                #expect(after == configured)
            }
        }
    }
}
