import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@testable import StoreLedgerWorker

/// After a failed claim a loop backs off, exponentially and jittered, and new work does not cut the wait short (a
/// NOTIFY per stored notification would turn the backoff into a retry per notification against a failing database);
/// shutdown does.
@Suite("Faults: a claim loop's backoff")
struct ClaimBackoffTests {
    @Test func theBackoffDoublesToItsCeilingAndIsJittered() {
        for failures in 1...9 {
            let ceiling = Duration.milliseconds(100 * (1 << min(failures, 6)))
            let draws = (0..<200).map { _ in WorkerService<EnvelopeHandler>.claimBackoff(afterFailures: failures) }
            #expect(draws.allSatisfy { $0 >= ceiling / 2 && $0 <= ceiling }, "failures \(failures): \(draws.min()!)–\(draws.max()!)")
            #expect(Set(draws).count > 1, "failures \(failures): not jittered")
        }
    }

    @Test func newWorkDoesNotEndTheWaitEarly() async {
        let wake = WakeSignal()
        let stopping = StopFlag()
        let start = ContinuousClock.now
        async let waited: Void = wake.wait(for: .milliseconds(800), unlessStopped: stopping)
        for _ in 0..<10 {
            try? await Task.sleep(for: .milliseconds(30))
            wake.signal()
        }
        await waited
        #expect(start.duration(to: .now) >= .milliseconds(800))
    }

    @Test func shutdownEndsTheWait() async {
        let wake = WakeSignal()
        let stopping = StopFlag()
        let start = ContinuousClock.now
        async let waited: Void = wake.wait(for: .seconds(30), unlessStopped: stopping)
        try? await Task.sleep(for: .milliseconds(100))
        stopping.set()
        wake.signal()
        await waited
        #expect(start.duration(to: .now) < .seconds(25))
    }

    /// A real worker whose claims fail (the queue table renamed away) while a NOTIFY arrives every 20 ms: from its
    /// first failure on, its one loop retries a handful of times in 3 s, not once per NOTIFY (about 140 before the
    /// fix); with the table back, it drains what came meanwhile.
    @Test(.timeLimit(.minutes(8)))
    func aWorkerWhoseClaimsFailIsNotWokenIntoRetriesByNewWork() async throws {
        try await TestDatabase.withFresh { db in
            let worker = try StoreLedgerProcess(
                ["work", "--handler", "envelope"],
                environment: [
                    "DATABASE_URL": db.url.connectionString, "ADMIN_PORT": "off", "LOG_LEVEL": "error", "WORKER_CONCURRENCY": "1",
                    "WORKER_POLL_SECONDS": "1",
                ])
            defer { worker.cleanUp() }
            func failures() -> Int { worker.output.components(separatedBy: "claim failed").count - 1 }
            func notify(for duration: Duration, until done: () -> Bool = { false }) async throws {
                let start = ContinuousClock.now
                while start.duration(to: .now) < duration, !done() {
                    try await db.client.query(PostgresQuery(unsafeSQL: "NOTIFY \(EventQueue.notificationChannel)"), logger: db.logger)
                        .readToEnd()
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await db.client.query("ALTER TABLE event_queue RENAME TO event_queue_away", logger: db.logger).readToEnd()
            try await notify(for: .seconds(60)) { failures() > 0 }
            let first = failures()
            #expect(first > 0, "no claim failed within a minute:\n\(worker.output)")
            try await notify(for: .seconds(3))
            let more = failures() - first
            try await db.client.query("ALTER TABLE event_queue_away RENAME TO event_queue", logger: db.logger).readToEnd()
            // At most 200 + 400 + 800 + 1,600 ms of backoff (each at least half that) fit in 3 s.
            #expect(more <= 6, "\(more) more failed claims in 3 s:\n\(worker.output)")

            _ = try await EventLog(client: db.client).append(
                NewEvent(source: .appleNotification, body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)), logger: db.logger)
            let drained = try await eventually(within: .seconds(60), every: .milliseconds(100)) {
                try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 1
            }
            #expect(drained, "the worker did not resume once its claims could succeed:\n\(worker.output)")
        }
    }
}
