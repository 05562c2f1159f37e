import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Operators: stats, inspect, requeue and replay")
struct OperatorStoreTests {
    static let pki = try! TestPKI()

    /// A log with one good lifecycle, one forged notification (rejected) and one dead event.
    func seeded(_ db: TestDatabase) async throws -> (pipeline: LedgerPipeline, forged: EventID, dead: EventID) {
        let pipeline = try LedgerPipeline(db, pki: Self.pki)
        try await pipeline.append(SubscriptionLifecycles.renewThenExpire().facts)
        let forgedSigner = TestSigner(pki: try TestPKI(), bundleID: "com.example.app")
        let forged = try await pipeline.append(
            source: .appleNotification,
            body: #"{"signedPayload":"\#(try forgedSigner.signedNotification(type: "TEST"))"}"#
        )
        let dead = try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"x.y.z"}"#)
        try await pipeline.drain()
        // Park `dead` as a worker would after its last attempt.
        try await db.client.query(
            """
            UPDATE event_queue SET state = 'dead', last_error = 'database: connection reset', reject_reason = NULL, finished_at = now()
            WHERE event_id = \(dead.rawValue)
            """,
            logger: db.logger
        )
        return (pipeline, forged, dead)
    }

    @Test func statsCountStatesAndParkedReasons() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            let stats = try await OperatorStore(client: db.client).statistics(logger: db.logger)
            #expect(stats.depth["done"] == (try await pipeline.count(.done)))
            #expect(stats.depth["rejected"] == 1)
            #expect(stats.depth["dead"] == 1)
            #expect(stats.depth["pending"] == 0)
            #expect(stats.oldestPendingAgeSeconds == nil)
            // The server's NOTIFY queue (the whole cluster's: other tests' listeners read theirs) is a fraction, near empty.
            #expect(stats.notifyQueueUsage >= 0 && stats.notifyQueueUsage < 0.01, "\(stats.notifyQueueUsage)")
            #expect(stats.rejectedByReason.values.reduce(0, +) == 1)
            #expect(stats.deadByError == ["database": 1])
            #expect(stats.receivedLastMinute == stats.depth.values.reduce(0, +))
            #expect(stats.finishedLastMinute == stats.receivedLastMinute)
        }
    }

    /// A requeue or replay of old events is work an operator asked for, not a ledger weeks behind Apple: its age counts
    /// from the requeue, apart from the oldest pending notification's (the "very old" alert stays quiet, and a replay
    /// waiting behind notifications never raises it), while an event never requeued keeps its age; and
    /// dead events group by cause, whichever worker held an expired lease or whatever error a retry recorded.
    @Test func theOldestPendingAgeCountsFromARequeueAndDeadEventsGroupByCause() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            try await db.client.query("UPDATE event_queue SET enqueued_at = now() - interval '30 days'", logger: db.logger)
            let store = OperatorStore(client: db.client)
            let done = try await pipeline.count(.done)
            let first = try await db.scalar("SELECT min(event_id) FROM event_queue")
            #expect(try await store.requeue(.idRange(Int64(first)...Int64.max), by: "ops", reason: "projection fix", logger: db.logger) == done + 2)
            let afterReplay = try await store.statistics(logger: db.logger)
            #expect(afterReplay.oldestPendingAgeSeconds == nil)
            let replayed = try #require(afterReplay.oldestRequeuedAgeSeconds)
            #expect(replayed < 600, "\(replayed) s")
            // An event appended two hours ago and never requeued is as old as it is.
            let waiting = try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"x.y.z"}"#)
            try await db.client.query(
                "UPDATE event_queue SET enqueued_at = now() - interval '2 hours' WHERE event_id = \(waiting.rawValue)", logger: db.logger)
            let withNotification = try await store.statistics(logger: db.logger)
            let behind = try #require(withNotification.oldestPendingAgeSeconds)
            #expect(behind > 7_000 && behind < 7_400, "\(behind) s")
            #expect(try #require(withNotification.oldestRequeuedAgeSeconds) < 600)

            // Leases held by two workers expire on their last attempt; a retry records a database error.
            let queue = EventQueue(client: db.client)
            for owner in ["host-a/1/x#0", "host-b/2/y#3"] {
                _ = try await queue.claim(limit: 1, owner: owner, lease: .seconds(30), logger: db.logger)
            }
            try await db.client.query(
                "UPDATE event_queue SET lease_expires_at = now() - interval '1 second' WHERE state = 'processing'", logger: db.logger)
            #expect(try await queue.rescueExpiredLeases(policy: RetryPolicy(maximumAttempts: 1), logger: db.logger) == 2)
            let dead = try await store.statistics(logger: db.logger).deadByError
            #expect(dead == ["lease expired": 2], "\(dead)")
        }
    }

    /// An event retried with a growing backoff is hidden from the oldest pending age (it is not available), and the
    /// oldest unfinished age shows it: a failure every event meets would otherwise raise no alert until events die.
    @Test func anEventWaitingOutARetrysBackoffCountsAsUnfinished() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            let store = OperatorStore(client: db.client)
            #expect(try await store.statistics(logger: db.logger).oldestUnfinishedAgeSeconds == nil)
            let failing = try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"x.y.z"}"#)
            try await db.client.query(
                """
                UPDATE event_queue SET enqueued_at = now() - interval '3 hours', attempts = 7, available_at = now() + interval '2 hours',
                       last_error = 'database: permission denied for table subscriptions'
                WHERE event_id = \(failing.rawValue)
                """,
                logger: db.logger)
            let stats = try await store.statistics(logger: db.logger)
            #expect(stats.oldestPendingAgeSeconds == nil)
            let unfinished = try #require(stats.oldestUnfinishedAgeSeconds)
            #expect(unfinished > 10_700 && unfinished < 11_000, "\(unfinished) s")
            // Held by a worker, it is still unfinished.
            try await db.client.query(
                """
                UPDATE event_queue SET state = 'processing', lease_owner = 'w', lease_expires_at = now() + interval '30 seconds'
                WHERE event_id = \(failing.rawValue)
                """,
                logger: db.logger)
            #expect(try await store.statistics(logger: db.logger).oldestUnfinishedAgeSeconds.map { $0 > 10_700 } == true)
        }
    }

    @Test func theLastMinuteCountsOnlyRowsOfTheLastMinute() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            let all = try await pipeline.count(.done) + 2
            // Age half of the events: received and finished an hour ago.
            try await db.client.query(
                """
                UPDATE event_queue SET enqueued_at = now() - interval '1 hour', finished_at = now() - interval '59 minutes'
                WHERE event_id % 2 = 0
                """,
                logger: db.logger
            )
            let aged = try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id % 2 = 0")
            let stats = try await OperatorStore(client: db.client).statistics(logger: db.logger)
            #expect(aged > 0)
            #expect(stats.receivedLastMinute == all - aged)
            #expect(stats.finishedLastMinute == all - aged)
            #expect(!stats.doneIsEstimated)
        }
    }

    @Test func aQueueOfManyDoneEventsEstimatesTheirCountAndSaysSo() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            let seededDone = try await pipeline.count(.done)
            let history = OperatorStore.exactDoneCountLimit + 20_000
            try await db.client.query(
                """
                INSERT INTO event_queue (event_id, event_received_at, state, enqueued_at, finished_at)
                SELECT 10000000 + g, now() - interval '1 day', 'done', now() - interval '1 day', now() - interval '1 day'
                FROM generate_series(1, \(history)) g
                """,
                logger: db.logger
            )
            try await db.client.query("ANALYZE event_queue", logger: db.logger)
            let stats = try await OperatorStore(client: db.client).statistics(logger: db.logger)
            let done = seededDone + history
            #expect(stats.doneIsEstimated)
            let estimate = try #require(stats.depth["done"])
            #expect(abs(estimate - done) <= done / 20, "estimate \(estimate), count \(done)")
            // The unfinished states and the last minute stay exact.
            #expect(stats.depth["rejected"] == 1 && stats.depth["dead"] == 1 && stats.depth["pending"] == 0)
            #expect(stats.receivedLastMinute == seededDone + 2)
        }
    }

    @Test func inspectTellsAnEventsWholeStory() async throws {
        try await TestDatabase.withFresh { db in
            let (_, forged, _) = try await seeded(db)
            let store = OperatorStore(client: db.client)
            let event = try #require(try await store.inspect(forged.rawValue, logger: db.logger))
            #expect(event.source == "apple_notification")
            #expect(event.state == "rejected")
            #expect(event.rejectReason?.isEmpty == false)
            #expect(event.body.map { String(buffer: $0) }?.hasPrefix(#"{"signedPayload":"#) == true)
            #expect(event.failures.map(\.outcome) == ["rejected"])
            #expect(try await store.inspect(999_999, logger: db.logger) == nil)
            // A finished event whose queue row was pruned (docs/operations.md) is still in the log: inspect shows it.
            try await db.client.query("DELETE FROM event_queue WHERE event_id = \(forged.rawValue)", logger: db.logger).readToEnd()
            let pruned = try #require(try await store.inspect(forged.rawValue, logger: db.logger))
            #expect(pruned.state == nil && pruned.body != nil && pruned.source == "apple_notification")
        }
    }

    @Test func requeueRecordsWhoAndWhyAndReprocessingConverges() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, forged, dead) = try await seeded(db)
            let store = OperatorStore(client: db.client)
            let before = try await pipeline.readModel()
            #expect(try await store.requeue(.dead, by: "ops@example", reason: "database was down", logger: db.logger) == 1)
            #expect(try await store.requeue(.rejected(reasonPrefix: "no-such-reason"), by: "ops", reason: "none match", logger: db.logger) == 0)
            #expect(try await store.requeue(.rejected(reasonPrefix: ""), by: "ops", reason: "new trust roots", logger: db.logger) == 1)
            #expect(try await pipeline.count(.pending) == 2)
            let event = try #require(try await store.inspect(dead.rawValue, logger: db.logger))
            #expect(event.actions.map(\.requestedBy) == ["ops@example"])
            #expect(event.actions.first?.previousState == "dead")
            #expect(event.attempts == 0)
            try await pipeline.drain()
            // Still not verifiable: both are parked again, and nothing else changed.
            #expect(try await pipeline.count(.rejected) == 2)
            #expect(try await pipeline.readModel() == before)
            #expect(try await store.inspect(forged.rawValue, logger: db.logger)?.actions.first?.reason == "new trust roots")
        }
    }

    @Test func replayingARangeReprocessesIdempotently() async throws {
        try await TestDatabase.withFresh { db in
            let (pipeline, _, _) = try await seeded(db)
            let store = OperatorStore(client: db.client)
            let before = try await pipeline.readModel()
            let facts = try await db.scalar(
                "SELECT (SELECT count(*) FROM notifications) + (SELECT count(*) FROM transactions) + (SELECT count(*) FROM renewal_infos)")
            let replayed = try await store.requeue(.idRange(1...3), action: "replay", by: "ops", reason: "fold fix", logger: db.logger)
            #expect(replayed == 3)
            #expect(
                try await store.requeue(
                    .receivedBetween(Date().addingTimeInterval(3600), Date().addingTimeInterval(7200)), action: "replay", by: "ops", reason: "future",
                    logger: db.logger) == 0)
            try await pipeline.drain()
            #expect(try await pipeline.readModel() == before)
            #expect(
                try await db.scalar(
                    "SELECT (SELECT count(*) FROM notifications) + (SELECT count(*) FROM transactions) + (SELECT count(*) FROM renewal_infos)")
                    == facts)
            #expect(try await db.scalar("SELECT count(*) FROM operator_actions WHERE action = 'replay'") == 3)
            // A replayed notification counts as another delivery of the same notification, applied once.
            #expect(
                try await db.scalar("SELECT count(*) FROM notification_deliveries")
                    == (try await db.scalar("SELECT count(DISTINCT event_id) FROM notification_deliveries")))
        }
    }

    /// Six events in every state a selection must tell apart: 1 done, 2 and 3 rejected for different reasons, 4 dead,
    /// 5 processing, 6 pending.
    func everyState(_ db: TestDatabase) async throws {
        try await db.client.query(
            """
            UPDATE event_queue SET state = s.state, reject_reason = s.reason, last_error = NULL,
                   finished_at = CASE WHEN s.state IN ('done', 'rejected', 'dead') THEN now() END,
                   lease_owner = CASE WHEN s.state = 'processing' THEN 'w' END,
                   lease_expires_at = CASE WHEN s.state = 'processing' THEN now() + interval '1 hour' END
            FROM (VALUES (1::int8, 'done', NULL), (2, 'rejected', 'wrong_environment: Sandbox data'),
                         (3, 'rejected', 'malformed: no payload'), (4, 'dead', NULL), (5, 'processing', NULL), (6, 'pending', NULL))
                 AS s(event_id, state, reason)
            WHERE event_queue.event_id = s.event_id
            """,
            logger: db.logger
        )
    }

    @Test("each selection requeues exactly the finished events it names; its values are binds, never SQL")
    func eachSelectionRequeuesWhatItNames() async throws {
        try await TestDatabase.withFresh { db in
            let log = EventLog(client: db.client)
            for index in 1...6 {
                _ = try await log.append(
                    NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.\#(index)"}"#)), logger: db.logger)
            }
            let store = OperatorStore(client: db.client)
            let hour: TimeInterval = 3600
            let cases: [(label: String, selection: OperatorStore.Selection, expected: [Int64])] = [
                ("dead", .dead, [4]),
                ("one reason", .rejected(reasonPrefix: "wrong_environment"), [2]),
                ("every reason", .rejected(reasonPrefix: ""), [2, 3]),
                ("a LIKE wildcard is a character", .rejected(reasonPrefix: "%"), []),
                ("a quote is a character", .rejected(reasonPrefix: "x'); DELETE FROM events; --"), []),
                ("ids", .ids([1, 3, 5, 6, 99]), [1, 3]),
                ("id range", .idRange(2...5), [2, 3, 4]),
                ("received now", .receivedBetween(Date().addingTimeInterval(-hour), Date().addingTimeInterval(hour)), [1, 2, 3, 4]),
                ("received later", .receivedBetween(Date().addingTimeInterval(hour), Date().addingTimeInterval(2 * hour)), []),
            ]
            for (label, selection, expected) in cases {
                try await everyState(db)
                let count = try await store.requeue(selection, by: "ops", reason: label, logger: db.logger)
                #expect(count == expected.count, "\(label)")
                let recorded = try await db.client.query(
                    "SELECT event_id FROM operator_actions WHERE reason = \(label) ORDER BY event_id", logger: db.logger
                ).decode(Int64.self).readToEnd()
                #expect(recorded == expected, "\(label)")
                let pending = try await db.client.query(
                    "SELECT event_id FROM event_queue WHERE state = 'pending' ORDER BY event_id", logger: db.logger
                ).decode(Int64.self).readToEnd()
                #expect(pending == (expected + [6]).sorted(), "\(label)")
                #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'processing'") == 1, "\(label)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 6)
        }
    }
}
