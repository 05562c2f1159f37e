import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// How the append, claim and completion reach Postgres for each `DATABASE_POOLER`, seen from the server: the one
/// code path chooses named statements with generic plans where sessions are kept, unnamed statements and no session
/// setting behind a transaction pooler, and the results are the same.
@Suite("Database pooler modes")
struct DatabasePoolerTests {
    /// The session's `plan_cache_mode` and how many of our named statements it holds, asked on `client`'s only
    /// connection (so it is the connection the statements ran on).
    func session(_ client: PostgresClient, _ db: TestDatabase) async throws -> (planCacheMode: String, namedStatements: Int) {
        let rows = try await client.query(
            """
            SELECT current_setting('plan_cache_mode'),
                   (SELECT count(*)::int8 FROM pg_prepared_statements WHERE name LIKE 'storeledger\\_%')
            """,
            logger: db.logger
        )
        for try await (mode, count) in rows.decode((String, Int).self) { return (mode, count) }
        throw StoreError.configuration("no row")
    }

    /// Appends, claims and completes two events through `client`; returns the appended and claimed ids and how many
    /// ended `done`.
    func appendClaimComplete(
        _ client: PostgresClient, _ sessions: DatabaseSessions, _ db: TestDatabase
    ) async throws -> (appended: [EventID], claimed: [EventID], done: Int) {
        let log = EventLog(client: client, sessions: sessions)
        var appended: [EventID] = []
        for index in 0..<2 {
            let event = NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.\#(index)"}"#))
            appended.append(try await log.append(event, logger: db.logger).id)
        }
        let claimed = try await EventQueue(client: client, sessions: sessions).claim(limit: 10, owner: "w", lease: .seconds(30), logger: db.logger)
        try await client.inTransaction(logger: db.logger, sessions: sessions) { connection in
            try await EventQueue.complete(
                claimed.map { ($0, .done) }, owner: "w", policy: .init(), on: connection, sessions: sessions, logger: db.logger
            )
        }
        return (appended, claimed.map(\.id), try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'"))
    }

    @Test(arguments: [DatabasePooler.direct, .session])
    func whereSessionsAreKeptTheStatementsAreNamedWithGenericPlans(_ pooler: DatabasePooler) async throws {
        try await TestDatabase.withFresh { db in
            // A client of its own, with one connection, so the session asked is the one the statements ran on.
            do {
                try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                    let result = try await appendClaimComplete(client, DatabaseSessions(pooler: pooler), db)
                    #expect(result.claimed == result.appended)
                    #expect(result.done == 2)
                    let session = try await session(client, db)
                    #expect(session.planCacheMode == "force_generic_plan")
                    #expect(session.namedStatements == 3)  // append, claim, complete
                }
            }
        }
    }

    /// PostgresNIO keeps a named statement's failed preparation for the connection's life and answers every later use
    /// with it, without asking the server. A first `Parse` that waited on a lock past `lock_timeout` (a migration or a
    /// partition detach holding the table, with a role's or database's timeout) must not leave the pooled connection
    /// failing the append or the claim for good: the connection sends them unnamed from then on.
    @Test(arguments: [DatabasePooler.direct, .session])
    func aStatementWhoseFirstPreparationFailedWorksOnceTheCauseIsGone(_ pooler: DatabasePooler) async throws {
        try await TestDatabase.withFresh { db in
            try await db.client.query(
                "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET lock_timeout = %L', current_database(), '200ms'); END $$", logger: db.logger
            ).readToEnd()
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let sessions = DatabaseSessions(pooler: pooler)
                let log = EventLog(client: client, sessions: sessions)
                let queue = EventQueue(client: client, sessions: sessions)
                let event = NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#))
                try await db.withTableLocked("events") {
                    await #expect(throws: (any Error).self) { try await log.append(event, logger: db.logger) }
                }
                let appended = try await log.append(event, logger: db.logger)
                try await db.withTableLocked("event_queue") {
                    await #expect(throws: (any Error).self) {
                        // A claim's lock wait is its lease: a short one, so that it fails while the test holds the lock.
                        try await queue.claim(limit: 10, owner: "w", lease: .milliseconds(300), logger: db.logger)
                    }
                }
                let claimed = try await queue.claim(limit: 10, owner: "w", lease: .seconds(30), logger: db.logger)
                #expect(claimed.map(\.id) == [appended.id])
                // The one connection sends both unnamed now: neither was ever prepared on it.
                #expect(try await session(client, db).namedStatements == 0)
            }
        }
    }

    @Test func behindATransactionPoolerTheyAreUnnamedAndNothingIsSetOnTheSession() async throws {
        try await TestDatabase.withFresh { db in
            do {
                try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                    let result = try await appendClaimComplete(client, DatabaseSessions(pooler: .transaction), db)
                    #expect(result.claimed == result.appended)
                    #expect(result.done == 2)
                    let session = try await session(client, db)
                    #expect(session.planCacheMode == "auto")
                    #expect(session.namedStatements == 0)
                }
            }
        }
    }

    @Test func aConnectionSendsNoStartupParameterAPoolerRefuses() throws {
        let plain = try DatabaseURL("postgres://u@db.example.com/ledger")
        #expect(try plain.clientConfiguration().options.additionalStartupParameters.isEmpty)
        #expect(try plain.connectionConfiguration().options.additionalStartupParameters.isEmpty)
        let named = try DatabaseURL("postgres://u@db.example.com/ledger?application_name=receiver")
        #expect(try named.clientConfiguration().options.additionalStartupParameters.map(\.0) == ["application_name"])
    }

    @Test func theSettingIsReadStrictly() throws {
        #expect(try DatabasePooler(configurationValue: "Transaction") == .transaction)
        #expect(try DatabasePooler(configurationValue: "session") == .session)
        #expect(try DatabasePooler(configurationValue: "none") == .direct)
        let error = #expect(throws: StoreError.self) { try DatabasePooler(configurationValue: "statement") }
        #expect(error?.detail.contains("none, session, transaction") == true)
    }
}
