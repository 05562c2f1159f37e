import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// A transaction whose success is reported (an acknowledgement to Apple above all) commits durably whatever
/// `synchronous_commit` the role, database or server sets: `off` becomes `on`, a setting that already flushes locally
/// stays as it is. For the transaction alone by a statement of its own (or with its limits), or, where sessions are
/// kept whole, once for the session when it is prepared (no statement per transaction on the receiver's path).
@Suite("Faults: durable commits")
struct DurableCommitTests {
    static let settings = [("off", "on"), ("local", "local"), ("remote_apply", "remote_apply"), ("on", "on")]

    /// Sets the database's `synchronous_commit` for new sessions to `configured`.
    static func configure(_ db: TestDatabase, _ configured: String) async throws {
        try await db.client.query(
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = %L', current_database(), '\(unescaped: configured)'); END $$",
            logger: db.logger
        ).readToEnd()
    }

    /// The transaction's setting, and the session's after it, on a fresh one-connection client.
    static func settings(_ db: TestDatabase, sessions: DatabaseSessions?, limits: TransactionLimits?) async throws -> (String?, String?) {
        try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
            let inside = try await client.inTransaction(logger: db.logger, sessions: sessions, limits: limits) { connection in
                try await connection.query("SELECT current_setting('synchronous_commit')", logger: db.logger)
                    .decode(String.self).readToEnd().first
            }
            let after = try await client.query("SELECT current_setting('synchronous_commit')", logger: db.logger)
                .decode(String.self).readToEnd().first
            return (inside, after)
        }
    }

    @Test(arguments: settings)
    func aTransactionCommitsDurablyWhateverTheDatabaseSets(_ configured: String, _ expected: String) async throws {
        try await TestDatabase.withFresh { db in
            try await Self.configure(db, configured)
            for limits in [nil, TransactionLimits(lease: .seconds(30))] {
                let (inside, after) = try await Self.settings(db, sessions: nil, limits: limits)
                #expect(inside == expected, "limits: \(String(describing: limits))")
                // The transaction's own: the session (behind a transaction pooler, anyone's next) keeps what was set.
                #expect(after == configured)
            }
            // Behind a transaction pooler nothing is set on the session: the transaction's own statement does it.
            let (pooled, pooledAfter) = try await Self.settings(db, sessions: DatabaseSessions(pooler: .transaction), limits: nil)
            #expect(pooled == expected && pooledAfter == configured)
        }
    }

    /// The prepared session's setting is its own (`pg_settings.source` = `session`), whatever it was: a reload of
    /// the server's configuration after `ALTER SYSTEM SET synchronous_commit = off` changes every session that set
    /// nothing, which a pooled connection prepared before it would otherwise keep for its whole life.
    @Test(arguments: settings)
    func aPreparedSessionsSettingOutlivesAReload(_ configured: String, _ expected: String) async throws {
        try await TestDatabase.withFresh { db in
            try await Self.configure(db, configured)
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let sessions = DatabaseSessions(pooler: .direct)
                try await client.inTransaction(logger: db.logger, sessions: sessions) { _ in }
                let (setting, source) = try #require(
                    try await client.query(
                        "SELECT setting, source FROM pg_settings WHERE name = 'synchronous_commit'", logger: db.logger
                    ).decode((String, String).self).readToEnd().first)
                #expect(setting == expected && source == "session")
            }
        }
    }

    @Test(arguments: settings)
    func aSessionKeptWholeIsMadeDurableOnceWhenPrepared(_ configured: String, _ expected: String) async throws {
        try await TestDatabase.withFresh { db in
            try await Self.configure(db, configured)
            for pooler in [DatabasePooler.direct, .session] {
                let (inside, after) = try await Self.settings(db, sessions: DatabaseSessions(pooler: pooler), limits: nil)
                #expect(inside == expected && after == expected, "\(pooler)")
            }
        }
    }
}
