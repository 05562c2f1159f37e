import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Event log partitions: ensure, list, detach")
struct EventPartitionsTests {
    static func date(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

    /// Appends an event as if received at `receivedAt` (an RFC 3339 time), its queue row in `state` (finished now,
    /// unless pending or processing) with `reason`.
    static func appendReceived(_ db: TestDatabase, at receivedAt: String, body: String, state: String = "pending", reason: String? = nil) async throws
    {
        try await db.client.query(
            """
            WITH e AS (
                INSERT INTO events (received_at, source, body, body_sha256)
                VALUES (\(receivedAt)::timestamptz, 'apple_notification', \(ByteBuffer(string: body)), sha256(\(ByteBuffer(string: body))))
                RETURNING id, received_at
            ) INSERT INTO event_queue (event_id, event_received_at, state, reject_reason, finished_at)
              SELECT id, received_at, \(state), \(reason), CASE WHEN \(state) IN ('pending', 'processing') THEN NULL ELSE now() END FROM e
            """,
            logger: db.logger
        ).readToEnd()
    }

    /// A month whose events landed in the default partition (its partition was not made in time) cannot get one;
    /// the months after it still do, so the default stops growing, and the default's events stay readable.
    @Test func aMonthAlreadyInTheDefaultPartitionDoesNotStopTheMonthsAfterIt() async throws {
        try await TestDatabase.withFresh { db in
            let partitions = EventPartitions(client: db.client)
            #expect(try await partitions.defaultPartitionHoldsEvents(logger: db.logger) == false)
            try await Self.appendReceived(db, at: "2031-02-10T00:00:00Z", body: "early")
            #expect(try await db.scalar("SELECT count(*) FROM events_default") == 1)
            #expect(try await partitions.defaultPartitionHoldsEvents(logger: db.logger))

            #expect(try await partitions.ensure(monthsAhead: 3, from: Self.date("2031-01-15T00:00:00Z"), logger: db.logger) == 3)
            let names = Set(try await partitions.list(logger: db.logger).map(\.name))
            #expect(names.isSuperset(of: ["events_2031_01", "events_2031_03", "events_2031_04"]))
            #expect(!names.contains("events_2031_02"))
            // Nothing moved or lost; a later event of the left-out month still lands in the default, a later month's
            // in its own partition.
            try await Self.appendReceived(db, at: "2031-02-20T00:00:00Z", body: "late")
            try await Self.appendReceived(db, at: "2031-03-05T00:00:00Z", body: "march")
            #expect(try await db.scalar("SELECT count(*) FROM events_default") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM events_2031_03") == 1)
            #expect(try await partitions.ensure(monthsAhead: 3, from: Self.date("2031-01-15T00:00:00Z"), logger: db.logger) == 0)

            // A worker's sweep says so, as an error, when it checks the partitions (at its start, then hourly).
            let worker = try StoreLedgerProcess(
                ["work", "--handler", "envelope"],
                environment: ["DATABASE_URL": db.url.connectionString, "ADMIN_PORT": "off", "LOG_LEVEL": "error"])
            defer { worker.cleanUp() }
            let said = try await eventually(within: .seconds(60), every: .milliseconds(100)) {
                worker.output.contains("events_default holds events")
            }
            #expect(said, "\(worker.output)")
        }
    }

    /// Each month is detached (and dropped) in a transaction of its own: when a later month is refused, the months
    /// before it are gone for good, and `partitions detach` says which before it says why it stopped.
    @Test func aRefusedMonthDoesNotHideTheMonthsDetachedBeforeIt() async throws {
        try await TestDatabase.withFresh { db in
            let partitions = EventPartitions(client: db.client)
            try await partitions.ensure(monthsAhead: 1, from: Self.date("2025-01-15T00:00:00Z"), logger: db.logger)
            try await Self.appendReceived(db, at: "2025-01-10T00:00:00Z", body: "finished", state: "done")
            try await Self.appendReceived(db, at: "2025-02-10T00:00:00Z", body: "waiting")
            let run = try await CommandRun.storeledger(
                ["partitions", "detach", "--before", "2025-03", "--drop"], environment: ["DATABASE_URL": db.url.connectionString])
            #expect(run.status != 0, "\(run.output)")
            #expect(run.output.contains("detached: events_2025_01"), "\(run.output)")
            #expect(run.output.contains("dropped: events_2025_01"), "\(run.output)")
            #expect(run.output.contains("events_2025_02 still has 1 unfinished event(s)"), "\(run.output)")
            #expect(run.output.contains("stopped after the months above, which stay detached; the next one:"), "\(run.output)")
            #expect(try await db.scalar("SELECT count(*) FROM pg_class WHERE relname = 'events_2025_01'") == 0)
            #expect(try await partitions.list(logger: db.logger).contains { $0.name == "events_2025_02" })
        }
    }

    @Test func oldMonthsAreDetachedOnlyWhenTheirEventsAreFinished() async throws {
        try await TestDatabase.withFresh { db in
            let partitions = EventPartitions(client: db.client)
            #expect(try await partitions.ensure(monthsAhead: 1, from: Self.date("2025-01-15T00:00:00Z"), logger: db.logger) == 2)
            #expect(try await partitions.ensure(monthsAhead: 1, from: Self.date("2025-01-15T00:00:00Z"), logger: db.logger) == 0)
            // Two old events in January 2025 (as if received then), one still pending.
            for body in ["a", "b"] { try await Self.appendReceived(db, at: "2025-01-10T00:00:00Z", body: body) }
            let listed = try await partitions.list(logger: db.logger)
            #expect(listed.first?.name == "events_2025_01")
            #expect(listed.first?.rows == 2)
            #expect(listed.last?.name == "events_default")

            await #expect(throws: StoreError.self) {
                _ = try await partitions.detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger)
            }
            try await db.client.query("UPDATE event_queue SET state = 'done', finished_at = now()", logger: db.logger)
            #expect(
                try await partitions.detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger).detached == ["events_2025_01"])
            #expect(try await db.scalar("SELECT count(*) FROM events WHERE received_at < '2025-02-01'") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM events_2025_01") == 2)
            // `inspect` still tells a detached event's story, from its queue row: the body is what it lacks.
            let archivedID = try await db.scalar("SELECT min(event_id) FROM event_queue")
            let archived = try #require(try await OperatorStore(client: db.client).inspect(Int64(archivedID), logger: db.logger))
            #expect(archived.body == nil && archived.state == "done" && archived.source == nil)
            #expect(try await partitions.list(logger: db.logger).contains { $0.name == "events_2025_01" } == false)
            // The table the first detach left (archived meanwhile) is dropped with --drop-detached, with the next month's.
            #expect(try await partitions.detachedTables(logger: db.logger) == ["events_2025_01"])
            #expect(
                try await partitions.detach(before: Self.date("2025-03-01T00:00:00Z"), drop: true, dropDetached: true, logger: db.logger)
                    == .init(detached: ["events_2025_02"], dropped: ["events_2025_02", "events_2025_01"]))
            #expect(try await db.scalar("SELECT count(*) FROM pg_class WHERE relname IN ('events_2025_01', 'events_2025_02')") == 0)
            // --drop-detached alone drops only what earlier runs left: the month this run detaches stays, to be archived.
            try await partitions.ensure(monthsAhead: 0, from: Self.date("2025-03-15T00:00:00Z"), logger: db.logger)
            try await Self.appendReceived(db, at: "2025-03-10T00:00:00Z", body: "c", state: "done")
            #expect(
                try await partitions.detach(before: Self.date("2025-04-01T00:00:00Z"), drop: false, dropDetached: true, logger: db.logger)
                    == .init(detached: ["events_2025_03"], dropped: []))
            #expect(try await db.scalar("SELECT count(*) FROM events_2025_03") == 1)
            // The current month and later still receive events: never detached, whatever --before says.
            let before = try await partitions.list(logger: db.logger).map(\.name)
            for month in [Date(), Date().addingTimeInterval(400 * 86_400)] {
                let start = Calendar.utc.date(
                    byAdding: .month, value: 1, to: Calendar.utc.date(from: Calendar.utc.dateComponents([.year, .month], from: month))!)!
                let refused = await #expect(throws: StoreError.self) { _ = try await partitions.detach(before: start, drop: true, logger: db.logger) }
                #expect(refused?.detail.contains("only months that have ended") == true)
            }
            #expect(try await partitions.list(logger: db.logger).map(\.name) == before)
            await #expect(throws: StoreError.self) { _ = try await partitions.ensure(monthsAhead: -1, logger: db.logger) }
        }
    }

    /// A month holding dead events, or events rejected for the deployment's settings, is not detached unless the
    /// operator says so: once detached, `requeue` can never bring them back, and Apple does not resend them. Events
    /// rejected for their own bytes (a bot's post) never pass and hold nothing back.
    @Test func aMonthHoldingEventsWorthRequeueingIsDetachedOnlyWhenAccepted() async throws {
        try await TestDatabase.withFresh { db in
            let partitions = EventPartitions(client: db.client)
            try await partitions.ensure(monthsAhead: 1, from: Self.date("2025-01-15T00:00:00Z"), logger: db.logger)
            let events: [(String, String, String, String?)] = [
                ("2025-01-10T00:00:00Z", "a", "done", nil), ("2025-01-11T00:00:00Z", "b", "rejected", "malformed: the body is not JSON"),
                ("2025-02-10T00:00:00Z", "c", "rejected", "wrongApp: signed for com.other.app"), ("2025-02-11T00:00:00Z", "d", "dead", nil),
                ("2025-02-12T00:00:00Z", "e", "rejected", "badSignature: the signature does not verify"),
            ]
            for (receivedAt, body, state, reason) in events {
                try await Self.appendReceived(db, at: receivedAt, body: body, state: state, reason: reason)
            }
            // January: one done, one rejected for its bytes: detached.
            #expect(
                try await partitions.detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger).detached == ["events_2025_01"])
            let march = Self.date("2025-03-01T00:00:00Z")
            let refused = await #expect(throws: StoreError.self) { _ = try await partitions.detach(before: march, drop: false, logger: db.logger) }
            #expect(
                refused?.detail.contains("events_2025_02 holds 2 dead event(s) or event(s) rejected for this deployment's") == true,
                "\(String(describing: refused))")
            #expect(refused?.detail.contains("--accept-parked-events") == true)
            #expect(try await partitions.list(logger: db.logger).contains { $0.name == "events_2025_02" })
            #expect(try await partitions.detach(before: march, drop: false, acceptingParked: true, logger: db.logger).detached == ["events_2025_02"])
        }
    }

    /// Creating or detaching a partition locks the whole log, and appends queue behind a waiting lock: while a long
    /// transaction holds the log (a `pg_dump`), each gives up after a short wait with a clear error, and an append made
    /// meanwhile is stored; once the log is free, the same call creates the partition.
    @Test func partitionChangesWaitBrieflyForTheLogsLockAndAppendsGoOn() async throws {
        try await TestDatabase.withFresh { db in
            // Waits of a few seconds (1 s and 5 s in service): wide enough for the test to see them under a loaded suite.
            let partitions = EventPartitions(client: db.client, creationLockWait: .seconds(4), detachLockWait: .seconds(4))
            let ahead = Self.date("2031-01-15T00:00:00Z")
            #expect(try await partitions.ensure(monthsAhead: 0, from: Self.date("2025-01-15T00:00:00Z"), logger: db.logger) == 1)
            let log = EventLog(client: db.client)
            try await db.withTableLocked("events", mode: "ACCESS SHARE") {
                let creating = Task { try await partitions.ensure(monthsAhead: 0, from: ahead, logger: db.logger) }
                #expect(try await eventually { try await GroupCommitTests.waitingOnLocks(db) == 1 })
                let appended = Task { try await log.append(GroupCommitTests.event(1, userAgent: nil), logger: db.logger) }
                let refused = await #expect(throws: StoreError.self) { try await creating.value }
                #expect(refused?.code == .unavailable)
                #expect(refused?.detail.contains("the partitions ahead were not created") == true)
                _ = try await appended.value
                let detach = await #expect(throws: StoreError.self) {
                    try await partitions.detach(before: Self.date("2025-02-01T00:00:00Z"), drop: false, logger: db.logger)
                }
                #expect(detach?.detail.contains("events_2025_01 was not detached") == true)
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 1)
            #expect(try await partitions.ensure(monthsAhead: 0, from: ahead, logger: db.logger) == 1)
            #expect(try await partitions.list(logger: db.logger).contains { $0.name == "events_2025_01" })
        }
    }
}
