import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization
import Testing

/// Postgres crashes (`pg_ctl stop -m immediate`: the server dies without a checkpoint and replays its WAL on restart)
/// under real `storeledger` processes: no acknowledged notification is lost, workers resume on their own, and SIGTERM
/// ends a process within its bound even while the database is gone. The machine's page cache survives such a crash,
/// so this shows that an acknowledgement follows its commit's WAL record (written even where `synchronous_commit` is
/// `off`); that the record reaches the disk before COMMIT answers is PostgreSQL's part (`fsync` on, as the throwaway
/// clusters run).
@Suite("Postgres crashes", .serialized)
struct PostgresCrashTests {
    /// Runs `body` with a private, migrated cluster, destroyed afterwards.
    func withCluster(_ body: (ThrowawayCluster) async throws -> Void) async throws {
        try await ThrowawayCluster.withRunning { cluster in
            _ = try await TestDatabase.withClient(cluster.url, maximumConnections: 2) { client in
                try await Migrator(migrations: try Migration.bundled()).migrate(client: client, logger: TestDatabase.makeLogger())
            }
            try await body(cluster)
        }
    }

    /// Starts `storeledger serve` on a free port against `cluster`; returns it with its base URL once it answers.
    func startReceiver(_ cluster: ThrowawayCluster, extra: [String: String] = [:]) async throws -> (StoreLedgerProcess, String) {
        let port = try freeLoopbackPort()
        let process = try StoreLedgerProcess(
            ["serve"],
            environment: [
                "DATABASE_URL": cluster.url.connectionString, "HOST": "127.0.0.1", "PORT": "\(port)", "ADMIN_PORT": "off",
                "LOG_LEVEL": "warning", "RECEIVER_STORE_TIMEOUT_MS": "3000", "DATABASE_MAX_CONNECTIONS": "8",
            ].merging(extra) { $1 })
        let base = "http://127.0.0.1:\(port)"
        for _ in 0..<200 {
            if let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: base + "/healthz"), timeout: .seconds(1)),
                response.status == .ok
            {
                return (process, base)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw StoreError.configuration("storeledger serve did not start: \(process.output)")
    }

    /// POSTs one notification body; returns the event id of a 200, nil for anything else.
    static func post(_ body: String, to base: String) async -> Int64? {
        var request = HTTPClientRequest(url: base + "/notifications/apple")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(10)), response.status == .ok,
            let data = try? await response.body.collect(upTo: 4096),
            let json = try? JSONSerialization.jsonObject(with: Data(String(buffer: data).utf8)) as? [String: Any]
        else { return nil }
        return (json["event_id"] as? NSNumber)?.int64Value
    }

    @Test(.timeLimit(.minutes(8)))
    func everyAcknowledgedNotificationSurvivesACrashUnderLoad() async throws {
        try await withCluster { cluster in
            let (receiver, base) = try await startReceiver(cluster)
            defer { receiver.cleanUp() }
            let load = LoadRecord()
            let total = 4_000
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<16 {
                    group.addTask {
                        while true {
                            let number = load.sent.add(1, ordering: .relaxed).newValue
                            if number > total { return }
                            let body = #"{"signedPayload":"h.p\#(sender)-\#(number).s"}"#
                            if let id = await Self.post(body, to: base) { load.acknowledged.withLock { $0[id] = body } }
                        }
                    }
                }
                // Crash once a quarter of the load is acknowledged, restart after a moment; senders go on throughout.
                group.addTask {
                    // (Or once everything was sent: a receiver acknowledging too little fails the count below, not the time limit.)
                    while load.acknowledged.withLock({ $0.count }) < total / 4 && load.sent.load(ordering: .relaxed) < total {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    try await cluster.crash()
                    try await Task.sleep(for: .milliseconds(300))
                    try await cluster.restart()
                }
                try await group.waitForAll()
            }
            let acked = load.acknowledged.withLock { $0 }
            #expect(acked.count > total / 4, "too few acknowledgements to mean anything")

            // Every acknowledged id names the body it was acknowledged for.
            try await TestDatabase.withClient(cluster.url, maximumConnections: 1) { client in
                let rows = try await client.query(
                    "SELECT id, convert_from(body, 'UTF8') FROM events WHERE id = ANY(\(Array(acked.keys)))", logger: TestDatabase.makeLogger()
                ).decode((Int64, String).self).readToEnd()
                let stored = Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) })
                let lost = acked.filter { stored[$0.key] != $0.value }
                #expect(lost.isEmpty, "\(lost.count) of \(acked.count) acknowledged notifications are missing or differ after the crash")
            }
        }
    }

    /// `synchronous_commit = off` for the database (a common tuning) lets COMMIT answer before its WAL record is
    /// written, and a crash then takes the transaction with it. The receiver's acknowledgement must survive anyway: its
    /// transaction flushes before it answers. The WAL writer is slowed to its longest delay, so that without that
    /// flush nothing else writes the record before the crash.
    @Test(.timeLimit(.minutes(4)))
    func anAcknowledgementSurvivesACrashWhereTheDatabaseTurnsSynchronousCommitOff() async throws {
        try await withCluster { cluster in
            try await TestDatabase.withClient(cluster.url, maximumConnections: 1) { client in
                let logger = TestDatabase.makeLogger()
                try await client.query("ALTER SYSTEM SET wal_writer_delay = '10s'", logger: logger).readToEnd()
                try await client.query("SELECT pg_reload_conf()", logger: logger).readToEnd()
                try await client.query("ALTER DATABASE storeledger SET synchronous_commit = off", logger: logger).readToEnd()
            }
            let (receiver, base) = try await startReceiver(cluster)
            defer { receiver.cleanUp() }
            var acknowledged: [Int64: String] = [:]
            for number in 0..<3 {
                let body = #"{"signedPayload":"h.p-\#(number).s"}"#
                let id = try #require(await Self.post(body, to: base), "not acknowledged: \(receiver.output)")
                acknowledged[id] = body
            }
            try await cluster.crash()
            try await cluster.restart()
            try await TestDatabase.withClient(cluster.url, maximumConnections: 1) { client in
                let rows = try await client.query(
                    "SELECT id, convert_from(body, 'UTF8') FROM events WHERE id = ANY(\(Array(acknowledged.keys)))",
                    logger: TestDatabase.makeLogger()
                ).decode((Int64, String).self).readToEnd()
                #expect(Dictionary(uniqueKeysWithValues: rows.map { ($0.0, $0.1) }) == acknowledged)
            }
        }
    }

    @Test(.timeLimit(.minutes(8)))
    func aWorkerResumesAfterACrashAndSIGTERMStopsItWithinItsBoundWhileTheDatabaseIsDown() async throws {
        try await withCluster { cluster in
            let environment = [
                "DATABASE_URL": cluster.url.connectionString, "ADMIN_PORT": "off", "LOG_LEVEL": "info",
                "WORKER_LEASE_SECONDS": "2", "WORKER_POLL_SECONDS": "1", "SHUTDOWN_TIMEOUT_SECONDS": "3",
            ]
            let worker = try StoreLedgerProcess(["work", "--handler", "envelope"], environment: environment)
            defer { worker.cleanUp() }
            let body = ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
            let logger = TestDatabase.makeLogger()
            func appendAndCount(_ count: Int) async throws -> Int {
                try await TestDatabase.withClient(cluster.url, maximumConnections: 1) { client in
                    let log = EventLog(client: client)
                    for _ in 0..<count { _ = try await log.append(NewEvent(source: .appleNotification, body: body), logger: logger) }
                    return count
                }
            }
            func unfinished() async throws -> Int {
                try await TestDatabase.withClient(cluster.url, maximumConnections: 1) { client in
                    try await client.query("SELECT count(*) FROM event_queue WHERE state <> 'done'", logger: logger).decode(Int.self).readToEnd()
                        .first ?? -1
                }
            }
            func settles() async throws -> Bool {
                try await eventually(within: .seconds(30), every: .milliseconds(100)) { try await unfinished() == 0 }
            }

            _ = try await appendAndCount(200)
            #expect(try await settles(), "\(worker.output)")

            // Crash while it works, restart: it resumes by itself and finishes what came before and after.
            _ = try await appendAndCount(300)
            try await cluster.crash()
            try await Task.sleep(for: .seconds(2))
            try await cluster.restart()
            _ = try await appendAndCount(200)
            #expect(try await settles(), "the worker did not resume after the crash:\n\(worker.output)")

            // With the database gone, SIGTERM still ends it within SHUTDOWN_TIMEOUT_SECONDS + 5 s of cancellation.
            _ = try await appendAndCount(100)
            try await cluster.crash()
            try await Task.sleep(for: .milliseconds(500))
            let start = ContinuousClock.now
            worker.send(SIGTERM)
            let status = await worker.waitForExit(within: .seconds(30))
            let took = start.duration(to: .now)
            #expect(status != nil, "still running 30 s after SIGTERM:\n\(worker.output)")
            #expect(took < .seconds(3 + 5 + 2), "took \(took) to stop")
            #expect(worker.output.contains("stopped"), "\(worker.output)")
        }
    }

    @Test(.timeLimit(.minutes(8)))
    func theReceiverStopsWithinItsBoundWhileTheDatabaseIsDown() async throws {
        try await withCluster { cluster in
            let (receiver, base) = try await startReceiver(cluster, extra: ["SHUTDOWN_TIMEOUT_SECONDS": "3", "LOG_LEVEL": "info"])
            defer { receiver.cleanUp() }
            #expect(await Self.post(#"{"signedPayload":"a.b.c"}"#, to: base) != nil)
            try await cluster.crash()
            // Requests in flight against the dead database.
            async let inFlight = Self.post(#"{"signedPayload":"a.b.c"}"#, to: base)
            try await Task.sleep(for: .milliseconds(300))
            let start = ContinuousClock.now
            receiver.send(SIGTERM)
            let status = await receiver.waitForExit(within: .seconds(30))
            let took = start.duration(to: .now)
            #expect(await inFlight == nil)
            #expect(status != nil, "still running 30 s after SIGTERM:\n\(receiver.output)")
            #expect(took < .seconds(3 + 5 + 2), "took \(took) to stop")
        }
    }
}

/// What a load run sent and which event id each acknowledged body got.
final class LoadRecord: Sendable {
    /// Bodies acknowledged with 200, by the event id the receiver answered.
    let acknowledged = Mutex<[Int64: String]>([:])
    /// How many requests were started.
    let sent = Atomic<Int>(0)
}
