import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

/// A failover to an asynchronous standby that was behind: the acknowledged events it never received are lost (what
/// asynchronous replication means), but no event id is handed to a second body, the change of history is noticed,
/// and its window is reconciled from Apple's notification history.
@Suite("Failover to a standby that was behind", .serialized)
struct FailoverTests {
    static let pki = try! TestPKI()

    @Test(.timeLimit(.minutes(8)))
    func aPromotedStandbyNeverReusesAnEventIDAndItsLostWindowIsReconciled() async throws {
        let primary = try await ThrowawayCluster.start()
        var standby: ThrowawayCluster?
        do {
            try await exercise(primary: primary) { standby = $0 }
        } catch {
            await primary.destroy()
            await standby?.destroy()
            Issue.record("\(String(reflecting: error))")
            return
        }
        await primary.destroy()
        await standby?.destroy()
    }

    /// A volume snapshot restored in place leaves the log as the snapshot had it: the newest events gone and the id
    /// sequence back, while the system identifier and timeline are the same (the history check sees nothing). Made
    /// here in one database (the append-only triggers set aside for it), without stopping a cluster. A worker that saw
    /// the higher mark records the change, ids continue past anything issued before, and the window to reconcile
    /// starts at the newest event the database still has.
    @Test func aSnapshotRestoredInPlaceIsNoticedByTheHighWaterMark() async throws {
        try await TestDatabase.withFresh(maximumConnections: 1) { db in
            let kept = try await Self.appendEvents(5, to: db)
            let keptSequence = try await Self.drawWebhookSequence(5, on: db.client, logger: db.logger)
            try await Self.appendEvents(20, to: db)
            let delivered = try await Self.drawWebhookSequence(20, on: db.client, logger: db.logger)
            let history = DatabaseHistory(client: db.client)
            let mark = try await history.checkRewind(seen: 0, logger: db.logger)
            #expect(!mark.rewound)
            #expect(mark.highWater >= kept + 20)
            #expect(try await !history.checkRewind(seen: mark.highWater, logger: db.logger).rewound)
            // The restore: what was stored after the snapshot is gone, and the sequence is where the snapshot had it.
            try await Self.behindTheTriggers(
                db,
                [
                    "DELETE FROM event_queue WHERE event_id > \(kept)", "DELETE FROM events WHERE id > \(kept)",
                    "SELECT setval('events_id_seq', \(kept))", "SELECT setval('webhook_event_sequence', \(keptSequence))",
                ])
            #expect(try await !history.check(logger: db.logger))
            let rewind = try await history.checkRewind(seen: mark.highWater, logger: db.logger)
            #expect(rewind.rewound)
            #expect(rewind.highWater > mark.highWater)
            let change = try #require(try await history.changes(unreconciledOnly: true, logger: db.logger).last)
            #expect(change.lastEventID == kept)
            #expect(change.eventIDFloor == rewind.highWater)
            #expect(change.previous == change.current)
            // Recorded once: before any event commits past the new floor, neither this worker (its mark now the floor)
            // nor another that saw the old mark records it again.
            #expect(try await !history.checkRewind(seen: rewind.highWater, logger: db.logger).rewound)
            #expect(try await !history.checkRewind(seen: mark.highWater, logger: db.logger).rewound)
            #expect(try await history.changes(logger: db.logger).count == 1)
            let next = try await Self.appendEvents(1, to: db)
            #expect(next > mark.highWater)
            #expect(try await Self.drawWebhookSequence(1, on: db.client, logger: db.logger) > delivered, "a delivered webhook number again")
            // Once recorded, the same mark is no change again (another worker that saw it too records nothing).
            #expect(try await !history.checkRewind(seen: mark.highWater, logger: db.logger).rewound)
        }
    }

    /// A connection that runs hot statements checks the history before its first transaction, in a statement of its
    /// own: after a failover, a worker's batch (which may enqueue webhook events, whose numbers need the check) never
    /// notices the change itself, inside a transaction that would hold the history's lock, and every receiver's first
    /// append behind it, until the batch ends. Made here by recording a history the database is not on (as after a
    /// promotion), then opening a worker's transaction: the change is already committed while it is still open.
    @Test(arguments: [DatabasePooler.direct, .session, .transaction])
    func theHistoryIsCheckedBeforeAConnectionsFirstTransactionNotInsideIt(_ pooler: DatabasePooler) async throws {
        try await TestDatabase.withFresh { db in
            let before = try await Self.recordAHistoryTheDatabaseIsNotOn(db)
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let sessions = DatabaseSessions(pooler: pooler)
                try await client.inTransaction(logger: db.logger, sessions: sessions) { connection in
                    try await Self.expectTheChangeCommittedWithoutAHistoryLock(db, recordsBefore: before)
                    try await connection.query("SELECT 1", logger: db.logger).readToEnd()
                }
            }
        }
    }

    /// A transaction pooler keeps this process's connection open across a failover of the server behind it: the check
    /// before a transaction runs before every one there, so a connection that already ran transactions on the old
    /// primary still records the change outside its next batch (which would otherwise hold the history's lock, and
    /// every receiver's first append behind it, until it ended).
    @Test func behindATransactionPoolerTheHistoryIsCheckedBeforeEveryTransaction() async throws {
        try await TestDatabase.withFresh { db in
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let sessions = DatabaseSessions(pooler: .transaction)
                try await client.inTransaction(logger: db.logger, sessions: sessions) { connection in
                    try await connection.query("SELECT 1", logger: db.logger).readToEnd()
                }
                let before = try await Self.recordAHistoryTheDatabaseIsNotOn(db)
                try await client.inTransaction(logger: db.logger, sessions: sessions) { connection in
                    try await Self.expectTheChangeCommittedWithoutAHistoryLock(db, recordsBefore: before)
                    try await connection.query("SELECT 1", logger: db.logger).readToEnd()
                }
            }
        }
    }

    /// The first check after a change of history, and after a restore in place, reads the newest event through the
    /// primary key, not by a scan of the whole log: every new connection's check waits behind it on the history's
    /// lock, so on a log of millions of events a scan held every receiver's first append for seconds to minutes.
    /// The window starts at that event. Checked by the statistics of the checking transaction itself.
    @Test func theFirstCheckAfterAChangeReadsTheNewestEventWithoutScanningTheLog() async throws {
        try await TestDatabase.withFresh(maximumConnections: 1) { db in
            try await db.client.query(
                """
                INSERT INTO events (source, body, body_sha256)
                SELECT 'apple_notification', convert_to('{"signedPayload":"h.p.' || g || '"}', 'UTF8'),
                       sha256(convert_to('{"signedPayload":"h.p.' || g || '"}', 'UTF8'))
                FROM generate_series(1, 20000) g
                """, logger: db.logger
            ).readToEnd()
            try await db.client.query("ANALYZE events", logger: db.logger).readToEnd()
            let newest = try await db.scalar("SELECT max(id) FROM events")
            try await Self.recordAHistoryTheDatabaseIsNotOn(db)
            let logScans = """
                SELECT coalesce(sum(seq_scan), 0)::int8 FROM pg_stat_xact_user_tables
                WHERE relid = 'events'::regclass OR relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'events'::regclass)
                """
            // The session's counts not yet flushed to pg_stat_user_tables show too (PostgreSQL 15): counted from here.
            let (changed, changeScans, rewound, rewindScans) = try await db.client.inTransaction(logger: db.logger) { connection in
                let before =
                    try await connection.query(PostgresQuery(unsafeSQL: logScans), logger: db.logger).decode(Int64.self)
                    .readToEnd().first ?? 0
                let changed = try await connection.query("SELECT storeledger_check_history()", logger: db.logger).decode(Bool.self)
                    .readToEnd().first
                let changeScans = try await connection.query(PostgresQuery(unsafeSQL: logScans), logger: db.logger).decode(Int64.self)
                    .readToEnd().first
                let rewound = try await connection.query(
                    "SELECT rewound FROM storeledger_check_rewind(storeledger_event_high_water() + 1)", logger: db.logger
                ).decode(Bool.self).readToEnd().first
                let rewindScans = try await connection.query(PostgresQuery(unsafeSQL: logScans), logger: db.logger).decode(Int64.self)
                    .readToEnd().first
                return (changed, changeScans.map { $0 - before }, rewound, rewindScans.map { $0 - before })
            }
            #expect(changed == true && rewound == true)
            #expect(changeScans == 0, "the change's check scanned the log")
            #expect(rewindScans == 0, "the rewind's check scanned the log")
            let changes = try await DatabaseHistory(client: db.client).changes(logger: db.logger)
            #expect(changes.count == 2)
            #expect(changes.allSatisfy { $0.lastEventID == Int64(newest) && $0.lastReceivedAt != nil })
        }
    }

    /// A crash can put the id sequence back below a value drawn by an append that never committed (its advance was
    /// written to the WAL but not flushed): no committed event is gone, and that is no restore. Made here by moving the
    /// sequence back by hand after ids were drawn and not used.
    @Test func aSequencePutBackByACrashIsNoRestore() async throws {
        try await TestDatabase.withFresh(maximumConnections: 1) { db in
            let last = try await Self.appendEvents(5, to: db)
            // Appends that drew their ids and had not committed when a worker's sweep read the mark.
            try await db.client.query("SELECT nextval('events_id_seq') FROM generate_series(1, 40)", logger: db.logger).readToEnd()
            let history = DatabaseHistory(client: db.client)
            let mark = try await history.checkRewind(seen: 0, logger: db.logger)
            #expect(mark.highWater == last)
            // The crash: the sequence's advance was not flushed, so it is back where the last commit left it.
            try await db.client.query("SELECT setval('events_id_seq', \(last))", logger: db.logger).readToEnd()
            let after = try await history.checkRewind(seen: mark.highWater, logger: db.logger)
            #expect(!after.rewound)
            #expect(try await history.changes(logger: db.logger).isEmpty)
        }
    }

    /// Detaching a month of the log for archiving takes its events out of `events` (their queue rows stay): when no
    /// event has arrived since, the log's largest id goes down, and that is no restore. Made here by deleting the rows
    /// as a detach takes them away, without partitions of past months.
    @Test func aDetachedMonthIsNoRestore() async throws {
        try await TestDatabase.withFresh(maximumConnections: 1) { db in
            try await Self.appendEvents(5, to: db)
            let history = DatabaseHistory(client: db.client)
            let mark = try await history.checkRewind(seen: 0, logger: db.logger)
            try await Self.behindTheTriggers(db, ["DELETE FROM events"])
            #expect(try await !history.checkRewind(seen: mark.highWater, logger: db.logger).rewound)
            #expect(try await history.changes(logger: db.logger).isEmpty)
        }
    }

    /// Records a history the database is not on (its last one's timeline + 1), as a promotion leaves it for the next
    /// check to find; returns how many history rows there are then.
    @discardableResult
    static func recordAHistoryTheDatabaseIsNotOn(_ db: TestDatabase) async throws -> Int {
        try await db.client.query(
            """
            INSERT INTO database_history (system_identifier, timeline)
            SELECT system_identifier, timeline + 1 FROM database_history ORDER BY id DESC LIMIT 1
            """, logger: db.logger
        ).readToEnd()
        return try await db.scalar("SELECT count(*) FROM database_history")
    }

    /// Expects, from another session, the change recorded and committed (one history row more than `recordsBefore`)
    /// and no history lock held.
    static func expectTheChangeCommittedWithoutAHistoryLock(_ db: TestDatabase, recordsBefore: Int) async throws {
        #expect(try await db.scalar("SELECT count(*) FROM database_history") == recordsBefore + 1)
        #expect(
            try await db.scalar(
                """
                SELECT count(*) FROM pg_locks
                WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """) == 0)
    }

    /// Appends `count` events (a placeholder body) as the receiver stores them; returns the last one's id.
    @discardableResult
    static func appendEvents(_ count: Int, to db: TestDatabase) async throws -> Int64 {
        let log = EventLog(client: db.client)
        var last: Int64 = 0
        for _ in 0..<count {
            last = try await log.append(
                NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"h.p.s"}"#)), logger: db.logger
            )
            .id.rawValue
        }
        return last
    }

    /// Draws `count` webhook sequence numbers as the outbox does (each event enqueued takes one); returns the largest.
    static func drawWebhookSequence(_ count: Int, on client: PostgresClient, logger: Logger) async throws -> Int64 {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                "SELECT max(storeledger_next_webhook_sequence()) FROM generate_series(1, \(count))", logger: logger
            ).decode(Int64.self).readToEnd().first ?? 0
        }
    }

    /// Runs `statements` on one connection with the log's append-only triggers set aside, as a restore in place or a
    /// detached month changes the log without going through them.
    static func behindTheTriggers(_ db: TestDatabase, _ statements: [String]) async throws {
        try await db.client.withConnection { connection in
            try await connection.query("SET session_replication_role = replica", logger: db.logger).readToEnd()
            for statement in statements { try await connection.query(PostgresQuery(unsafeSQL: statement), logger: db.logger).readToEnd() }
            try await connection.query("RESET session_replication_role", logger: db.logger).readToEnd()
        }
    }

    func exercise(primary: ThrowawayCluster, standbyCreated: (ThrowawayCluster) -> Void) async throws {
        let logger = TestDatabase.makeLogger()
        let signer = TestSigner(pki: Self.pki, bundleID: "com.example.app")
        @Sendable func body(_ payload: String) -> ByteBuffer { ByteBuffer(string: #"{"signedPayload":"\#(payload)"}"#) }

        // Five events both servers will have.
        let before = try await TestDatabase.withClient(primary.url, maximumConnections: 2) { client in
            try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: logger)
            var ids: [Int64] = []
            for _ in 0..<5 {
                ids.append(
                    try await EventLog(client: client).append(NewEvent(source: .appleNotification, body: body("h.p.s")), logger: logger).id.rawValue)
            }
            return ids
        }
        let standby = try await primary.makeStandby()
        standbyCreated(standby)
        try await TestDatabase.withClient(standby.url, maximumConnections: 1) { client in
            let replicated = try await eventually(within: .seconds(10), every: .milliseconds(50)) {
                try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int.self).readToEnd().first == before.count
            }
            #expect(replicated)
        }
        // The standby falls behind; the primary acknowledges 60 more notifications (really signed ones) and delivers
        // webhook events numbered up to `delivered`, then dies.
        try await standby.stop()
        let delivered = try await TestDatabase.withClient(primary.url, maximumConnections: 1) { client in
            try await Self.drawWebhookSequence(40, on: client, logger: logger)
        }
        let lost = try await TestDatabase.withClient(primary.url, maximumConnections: 2) { client in
            var lost: [(id: Int64, payload: String)] = []
            for index in 0..<60 {
                let payload = try signer.signedNotification(
                    type: "DID_RENEW", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "\(7_000 + index)")
                )
                let appended = try await EventLog(client: client).append(NewEvent(source: .appleNotification, body: body(payload)), logger: logger)
                lost.append((appended.id.rawValue, payload))
            }
            return lost
        }
        try await primary.crash()
        try await standby.restart()
        try await standby.promote()

        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withClient(standby.url, maximumConnections: 2) { client in
                // A worker's first webhook event on the new primary (before any append) is numbered above every number
                // hosts received: they would ignore it as old otherwise.
                let nextSequence = try await Self.drawWebhookSequence(1, on: client, logger: logger)
                #expect(nextSequence > delivered, "webhook sequence \(nextSequence) was already delivered")
                // The first append on the new primary gets an id no acknowledged event ever had.
                let next = try await EventLog(client: client).append(NewEvent(source: .appleNotification, body: body("h.after.s")), logger: logger)
                let highestAcknowledged = lost.map(\.id).max() ?? 0
                #expect(next.id.rawValue > highestAcknowledged, "event id \(next.id) was already acknowledged for another body")
                #expect(try await client.query("SELECT count(*) FROM events", logger: logger).decode(Int.self).readToEnd().first == before.count + 1)

                // The change is on record, with what the new primary still had.
                let changes = try await DatabaseHistory(client: client).changes(logger: logger)
                #expect(changes.count == 1)
                let change = try #require(changes.first)
                #expect(change.previous.timeline == 1 && change.current.timeline == 2)
                #expect(change.previous.systemIdentifier == change.current.systemIdentifier)
                #expect(change.lastEventID == before.max())
                #expect(change.eventIDFloor <= next.id.rawValue)
                #expect(try await DatabaseHistory(client: client).check(logger: logger) == false, "noticed once, not on every check")

                // Apple's notification history holds what was lost: reconciling the window appends it back, once.
                await fake.state.setNotificationHistory(
                    lost.map { NotificationHistoryItem(signedPayload: $0.payload, sendAttempts: nil) }, environment: .sandbox
                )
                let reconciler = Reconciler(
                    client: client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox]
                )
                let result = try await reconciler.reconcileHistoryChanges(logger: logger)
                #expect(result.appended == lost.count)
                #expect(try await DatabaseHistory(client: client).changes(unreconciledOnly: true, logger: logger).isEmpty)
                #expect(try await reconciler.reconcileHistoryChanges(logger: logger) == .init())
                #expect(
                    try await client.query("SELECT count(*) FROM events WHERE source = 'reconciliation'", logger: logger)
                        .decode(Int.self).readToEnd().first == lost.count
                )
            }
        }
    }
}
