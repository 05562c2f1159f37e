import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import ServiceLifecycle
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization
import Testing

@testable import StoreLedgerWorker

/// Faults at commit time, injected with deferred constraint triggers (they run when the transaction commits, after
/// every row of the statement was already sent): an acknowledgement must wait for the commit's final word.
@Suite("Commit faults")
struct CommitFaultTests {
    static let envelope = ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
    let migrator = Migrator(migrations: try! Migration.bundled())

    /// Installs a deferred trigger on `table` that fails (or, with `sleepSeconds`, waits) at commit, for rows `when`.
    static func installCommitTrigger(
        _ db: TestDatabase, on table: String, event: String = "INSERT", when condition: String = "true", sleepSeconds: Double? = nil
    ) async throws {
        let action =
            sleepSeconds.map { "PERFORM pg_sleep(\($0)); RETURN NULL;" }
            ?? "RAISE EXCEPTION 'injected commit failure' USING ERRCODE = 'P0001';"
        try await db.client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE FUNCTION test_commit_fault() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \(action) END $$
                    """),
            logger: db.logger
        )
        try await db.client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE CONSTRAINT TRIGGER test_commit_fault AFTER \(event) ON \(table)
                    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (\(condition)) EXECUTE FUNCTION test_commit_fault()
                    """),
            logger: db.logger
        )
    }

    static func removeCommitTrigger(_ db: TestDatabase, on table: String) async throws {
        try await db.client.query(PostgresQuery(unsafeSQL: "DROP TRIGGER test_commit_fault ON \(table)"), logger: db.logger)
    }

    func receiver(_ db: TestDatabase) -> some ApplicationProtocol {
        Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: .underTest))
    }

    @Test func receiverAnswers503AndStoresNothingWhenTheCommitFails() async throws {
        try await TestDatabase.withFresh { db in
            try await Self.installCommitTrigger(db, on: "event_queue")
            try await receiver(db).test(.router) { client in
                for route in ReceiverController.routes {
                    try await client.execute(uri: route.path.description, method: .post, body: Self.envelope) { response in
                        #expect(response.status == .serviceUnavailable, "\(route.path)")
                        #expect(!String(buffer: response.body).contains("event_id"))
                    }
                }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue") == 0)

            // Once the fault is gone, the same request is acknowledged and stored.
            try await Self.removeCommitTrigger(db, on: "event_queue")
            try await receiver(db).test(.router) { client in
                try await client.execute(uri: "/notifications/apple", method: .post, body: Self.envelope) { #expect($0.status == .ok) }
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 1)
        }
    }

    @Test func receiverAnswersOnlyAfterASlowCommitIsVisible() async throws {
        try await TestDatabase.withFresh { db in
            try await Self.installCommitTrigger(db, on: "event_queue", sleepSeconds: 0.4)
            try await receiver(db).test(.router) { client in
                for _ in 0..<3 {
                    let id = try await client.execute(uri: "/notifications/apple", method: .post, body: Self.envelope) { response in
                        #expect(response.status == .ok)
                        let json = try JSONSerialization.jsonObject(with: Data(String(buffer: response.body).utf8)) as? [String: Any]
                        return (json?["event_id"] as? Int) ?? -1
                    }
                    // Read from another connection the moment the 200 arrives: the row must already be committed.
                    #expect(try await db.scalar("SELECT count(*) FROM events WHERE id = \(id)") == 1)
                    #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(id)") == 1)
                }
            }
        }
    }

    @Test func eventLogAppendThrowsWhenTheCommitFails() async throws {
        try await TestDatabase.withFresh { db in
            try await Self.installCommitTrigger(db, on: "event_queue")
            let log = EventLog(client: db.client)
            await #expect(throws: (any Error).self) {
                _ = try await log.append(NewEvent(source: .appleNotification, body: Self.envelope), logger: db.logger)
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    /// A worker's batch whose COMMIT fails (at the completion): the event is not done and comes back, and with the
    /// real ledger handler none of its effects stay (no fact, no subscription row); without the fault it is applied once.
    @Test(arguments: [false, true])
    func workerCompletionWhoseCommitFailsLeavesTheEventClaimable(realLedger: Bool) async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: WebhookTests.pki)
            let id: EventID
            if realLedger {
                try await pipeline.append(WebhookTests.startingFact)
                id = EventID(Int64(try await db.scalar("SELECT max(id) FROM events")))
            } else {
                id = try await EventLog(client: db.client).append(NewEvent(source: .appleNotification, body: Self.envelope), logger: db.logger).id
            }
            @Sendable func process(_ batch: [ClaimedEvent], owner: String) async {
                let configuration = WorkerConfiguration(batchSize: 10)
                if realLedger {
                    await WorkerService(client: db.client, handler: pipeline.handler, configuration: configuration, logger: db.logger).process(
                        batch, owner: owner)
                } else {
                    await WorkerService(client: db.client, handler: EnvelopeHandler(), configuration: configuration, logger: db.logger).process(
                        batch, owner: owner)
                }
            }
            try await Self.installCommitTrigger(db, on: "event_queue", event: "UPDATE", when: "NEW.state = 'done'")
            let queue = EventQueue(client: db.client)
            let batch = try await queue.claim(limit: 10, owner: "w#0", lease: .seconds(30), logger: db.logger)
            #expect(batch.map(\.id) == [id])
            await process(batch, owner: "w#0")
            // Not done: the completion never committed; the failure was recorded as a retry, so the event comes back.
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE event_id = \(id.rawValue) AND state = 'pending'") == 1)
            // And the handler's effects went with it.
            for table in ["notifications", "transactions", "renewal_infos", "subscriptions", "subscription_fold_states"] {
                #expect(try await db.scalar(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)")) == 0, "\(table)")
            }

            try await Self.removeCommitTrigger(db, on: "event_queue")
            try await db.client.query("UPDATE event_queue SET available_at = now()", logger: db.logger)
            let again = try await queue.claim(limit: 10, owner: "w#1", lease: .seconds(30), logger: db.logger)
            #expect(again.map(\.id) == [id])
            await process(again, owner: "w#1")
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 1)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == (realLedger ? 1 : 0))
        }
    }

    @Test(arguments: ["event_queue", "subscriptions", "user_links"])
    func thePurchaseIntakeTellsTheAppNothingWhenItsCommitFails(table: String) async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: AppStorePaymentsTests.pki)
            let jws = try harness.subscription("5900", expiresIn: 7 * 86_400)
            try await Self.installCommitTrigger(db, on: table, event: "INSERT OR UPDATE")
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: AppStorePaymentsTests.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(response.status.code >= 500, "\(response.status) \(String(buffer: response.body))")
                #expect(!String(buffer: response.body).contains("is_premium"))
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links") == 0)

            // Without the fault the same request is answered and stored, once.
            try await Self.removeCommitTrigger(db, on: table)
            try await harness.app.test(.router) { client in
                let response = try await client.execute(
                    uri: AppStorePaymentsTests.transactionPath, method: .post, headers: try await AppAPIHarness.headers(user: "alice"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(response.status == .ok)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions WHERE entitled") == 1)
        }
    }

    @Test func theStoreTimeoutBoundsTheAnswerEvenWhileTheDatabaseHoldsTheStatement() async throws {
        try await TestDatabase.withFresh { db in
            let configuration = ReceiverConfiguration(port: 0, storeTimeout: .milliseconds(500))
            let app = Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: configuration))
            // Another session holds the queue table until the receiver has answered: the 503 comes while the lock is
            // still held, so the deadline did not wait for the database.
            try await db.withTableLocked("event_queue") {
                try await app.test(.router) { client in
                    try await client.execute(uri: "/notifications/apple", method: .post, body: Self.envelope) { response in
                        #expect(response.status == .serviceUnavailable)
                    }
                }
            }
        }
    }

    /// A store deadline longer than the log's own 10 s is the one that counts: a commit that a lock holds for 11 s is
    /// still answered 200 when the receiver was told to wait 15 s (the transaction was once cut at 10 s, answering 503
    /// to a commit the database then completed).
    @Test func aStoreTimeoutAboveTenSecondsIsTheCommitsToo() async throws {
        try await TestDatabase.withFresh { db in
            let configuration = ReceiverConfiguration(port: 0, storeTimeout: .seconds(15))
            let app = Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: configuration))
            try await app.test(.router) { client in
                let locked = AnsweredFlag()
                let status = try await withThrowingTaskGroup(of: HTTPResponse.Status?.self) { group in
                    group.addTask {
                        try await db.withTableLocked("event_queue") {
                            locked.set()
                            try await Task.sleep(for: .seconds(11))
                        }
                        return nil
                    }
                    group.addTask {
                        while !locked.isSet { try await Task.sleep(for: .milliseconds(5)) }
                        return try await client.execute(uri: "/notifications/apple", method: .post, body: Self.envelope).status
                    }
                    var status: HTTPResponse.Status?
                    for try await answer in group { status = answer ?? status }
                    return status
                }
                #expect(status == .ok)
            }
            let stored = try await db.client.rows("SELECT count(*)::int8 FROM events", logger: db.logger).decode(Int.self)
            #expect(stored == [1])
        }
    }

    /// A batch whose leases another worker rescued before it committed reports so (its claim loop then shrinks its
    /// batches, as after a missed deadline, instead of doubling them): nothing of it is recorded, and the new holder's
    /// attempt completes.
    @Test func aBatchWhoseLeasesWereRescuedSaysSo() async throws {
        try await TestDatabase.withFresh { db in
            let id = try await EventLog(client: db.client).append(NewEvent(source: .appleNotification, body: Self.envelope), logger: db.logger).id
            let worker = WorkerService(
                client: db.client, handler: EnvelopeHandler(), configuration: WorkerConfiguration(batchSize: 10), logger: db.logger)
            let queue = EventQueue(client: db.client)
            let zombie = try await queue.claim(limit: 10, owner: "w#0", lease: .seconds(30), logger: db.logger)
            #expect(zombie.map(\.id) == [id])
            try await db.client.query(
                "UPDATE event_queue SET lease_expires_at = now() - interval '1 second' WHERE state = 'processing'", logger: db.logger)
            #expect(try await queue.rescueExpiredLeases(policy: RetryPolicy(), logger: db.logger) == 1)
            try await db.client.query("UPDATE event_queue SET available_at = now()", logger: db.logger)
            let taken = try await queue.claim(limit: 10, owner: "w#1", lease: .seconds(30), logger: db.logger)
            #expect(await worker.process(zombie, owner: "w#0") == false)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 0)
            #expect(await worker.process(taken, owner: "w#1") == true)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 1)
        }
    }
}
