import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Event log")
struct EventLogTests {
    func appendOne(_ db: TestDatabase, body: String = #"{"signedPayload":"a.b.c"}"#) async throws -> AppendedEvent {
        try await EventLog(client: db.client).append(
            NewEvent(source: .appleNotification, environmentHint: .production, body: ByteBuffer(string: body)),
            logger: db.logger
        )
    }

    @Test func appendStoresTheEventAndAPendingQueueRow() async throws {
        try await TestDatabase.withFresh { db in
            let event = try await appendOne(db)
            #expect(try await db.scalar("SELECT count(*) FROM events WHERE id = \(event.id.rawValue)") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(event.id.rawValue) AND state = 'pending'") == 1)
            let digestMatches = try await db.scalar("SELECT count(*) FROM events WHERE body_sha256 = sha256(body)")
            #expect(digestMatches == 1)
        }
    }

    @Test(arguments: [
        "UPDATE events SET source = 'client'",
        "DELETE FROM events",
        "TRUNCATE events",
        "TRUNCATE events_default",
    ])
    func theLogIsAppendOnlyEvenForItsOwner(_ statement: String) async throws {
        try await TestDatabase.withFresh { db in
            _ = try await appendOne(db)
            let error = await #expect(throws: PSQLError.self) {
                try await db.client.query(PostgresQuery(unsafeSQL: statement), logger: db.logger)
            }
            #expect(error?.serverInfo?[.message]?.contains("append-only") == true)
            #expect(try await db.scalar("SELECT count(*) FROM events") == 1)
        }
    }

    @Test func everyMonthlyPartitionRefusesTruncateToo() async throws {
        try await TestDatabase.withFresh { db in
            let rows = try await db.client.query(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'events'::regclass AND c.relname <> 'events_default'",
                logger: db.logger
            )
            var partitions: [String] = []
            for try await name in rows.decode(String.self) { partitions.append(name) }
            #expect(partitions.count >= 4)
            for partition in partitions {
                await #expect(throws: PSQLError.self) {
                    try await db.client.query(PostgresQuery(unsafeSQL: "TRUNCATE \(partition)"), logger: db.logger)
                }
            }
        }
    }

    @Test func partitionsAreCreatedAheadAndTheCurrentMonthIsUsed() async throws {
        try await TestDatabase.withFresh { db in
            let log = EventLog(client: db.client)
            #expect(try await log.ensurePartitions(monthsAhead: 3, logger: db.logger) == 0)  // the migration made them
            #expect(try await log.ensurePartitions(monthsAhead: 5, logger: db.logger) == 2)
            _ = try await appendOne(db)
            #expect(try await db.scalar("SELECT count(*) FROM events_default") == 0)
            let month = try await db.scalar("SELECT count(*) FROM pg_class WHERE relname = 'events_' || to_char(now() AT TIME ZONE 'UTC', 'YYYY_MM')")
            #expect(month == 1)
        }
    }

    @Test func oldPartitionsCanBeDetachedForArchival() async throws {
        try await TestDatabase.withFresh { db in
            _ = try await appendOne(db)
            let name =
                "events_"
                + {
                    let formatter = DateFormatter()
                    formatter.dateFormat = "yyyy_MM"
                    formatter.timeZone = TimeZone(identifier: "UTC")
                    return formatter.string(from: Date())
                }()
            try await db.client.query(PostgresQuery(unsafeSQL: "ALTER TABLE events DETACH PARTITION \(name)"), logger: db.logger)
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
            #expect(try await db.scalar(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(name)")) == 1)
        }
    }
}
