import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization
import Testing

/// The listeners close idle and dripping connections (real sockets on 127.0.0.1, small timeouts) and keep serving
/// normal clients.
@Suite("HTTP: idle and slow connections are closed")
struct HTTPTimeoutTests {
    let migrator = Migrator(migrations: try! Migration.bundled())
    static let body = #"{"signedPayload":"x.y.z"}"#

    /// Runs the public application exactly as `serve` builds it (`buildReceiverApplication`), with `timeouts`, and
    /// gives `body` its port. Its store deadline is 15 s: these tests are about the HTTP limits, and a loaded runner
    /// has taken more than the default 5 s to store a notification.
    func withReceiver(_ db: TestDatabase, timeouts: HTTPTimeouts, _ body: @escaping @Sendable (Int) async throws -> Void) async throws {
        var configuration = try db.url.clientConfiguration(maximumConnections: 2)
        configuration.options.keepAliveBehavior = nil
        let app = buildReceiverApplication(
            client: PostgresClient(configuration: configuration), migrator: migrator,
            configuration: ReceiverConfiguration(port: 0, storeTimeout: .seconds(15), timeouts: timeouts), logger: db.logger
        )
        try await app.test(.live) { client in try await body(try #require(client.port)) }
    }

    @Test func aConnectionThatSendsNothingIsClosed() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .milliseconds(300), request: .seconds(60))) { port in
                let outcome = try await RawConnection.run(port: port) { _ in }
                #expect(outcome.closedByServer)
                #expect(outcome.received == "")
            }
        }
    }

    /// A client that sends requests and never reads the answers (its window shut) leaves the server's answer unwritten:
    /// neither the idle timeout (an answer is being written) nor the request deadline (the requests arrived) runs
    /// then, and the connection, with the request task waiting to write, would be held for as long as the client
    /// likes. An answer that makes no progress for the idle timeout closes the connection.
    /// (Closed for that reason, not by the idle timer before its first request: the stall is counted.)
    @Test func aClientThatNeverReadsItsAnswersIsClosed() async throws {
        let registry = AdminPortTests.registry  // swift-metrics bootstrapped before the handler makes its counter
        func stalls() -> Int {
            let line = registry.emitToString().split(separator: "\n").first { $0.hasPrefix("storeledger_http_stalled_answers_total ") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        let before = stalls()
        try await TestDatabase.withFresh { db in
            // Idle 3 s: wide enough that the idle timer does not close the connection before its first request
            // arrives on a loaded machine (the stall count below would then fail the test).
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(3), request: .seconds(60))) { port in
                let closedAfter = try await RawConnection.pipelineWithoutReading(
                    "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", port: port, bound: .seconds(60))
                #expect(closedAfter != nil, "the connection was still open after 60 s")
            }
        }
        #expect(stalls() > before)
    }

    @Test func aRequestHeadDrippedSlowerThanTheDeadlineIsClosed() async throws {
        try await TestDatabase.withFresh { db in
            // The idle timeout is far away: only the request deadline can close this connection.
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(60), request: .milliseconds(300))) { port in
                let request = RawConnection.post("/notifications/apple", body: Self.body)
                let outcome = try await RawConnection.run(port: port) { writer in
                    try await RawConnection.drip(request, every: .milliseconds(40), to: writer)
                }
                #expect(outcome.closedByServer)
                #expect(outcome.received == "" || outcome.received.hasPrefix("HTTP/1.1 503"), "\(outcome.received)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    /// A body the HTTP parser refuses part way (a broken chunk), like one whose client went away mid-body, is the
    /// sender's fault: 400, nothing stored, not a 500 that raises the "cannot store" alarm.
    @Test func aBodyThatCannotBeReadInFullIsABadRequestNotAServerError() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(60), request: .seconds(60))) { port in
                let head = "POST /notifications/apple HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                let outcome = try await RawConnection.run(port: port) { writer in
                    try await writer.write(ByteBuffer(string: head + "5\r\n{\"sig\r\nnot a chunk size\r\n"))
                }
                #expect(outcome.received.hasPrefix("HTTP/1.1 400"), "\(outcome.received)")
                #expect(!outcome.received.contains("internal_error"), "\(outcome.received)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    /// An answer written once the server has begun to shut down says `Connection: close`: the server closes the
    /// connection after it, and a load balancer that pooled the connection must not send its next POST into that
    /// close (a proxy does not retry a POST: Apple would get a 502). Here the request is in flight (its append waits
    /// on a lock, then gives up at the store timeout, long enough for a loaded machine) when the server is told to stop.
    @Test func anAnswerWrittenDuringShutdownClosesTheConnection() async throws {
        try await TestDatabase.withFresh { db in
            var configuration = try db.url.clientConfiguration(maximumConnections: 2)
            configuration.options.keepAliveBehavior = nil
            let app = buildReceiverApplication(
                client: PostgresClient(configuration: configuration), migrator: migrator,
                configuration: ReceiverConfiguration(port: 0, storeTimeout: .seconds(10)), logger: db.logger)
            let answer = Mutex<Task<RawConnection.Outcome, any Error>?>(nil)
            try await db.withTableLocked("event_queue") {
                try await app.test(.live) { client in
                    let port = try #require(client.port)
                    answer.withLock {
                        $0 = Task {
                            try await RawConnection.run(port: port, bound: .seconds(20)) { writer in
                                try await writer.write(ByteBuffer(string: RawConnection.post("/notifications/apple", body: Self.body)))
                            }
                        }
                    }
                    #expect(try await eventually { try await GroupCommitTests.waitingOnLocks(db) == 1 })
                    // Returning stops the server while the request is in flight.
                }
            }
            let outcome = try await #require(answer.withLock { $0 }).value
            #expect(outcome.received.hasPrefix("HTTP/1.1 503"), "\(outcome.received)")
            #expect(outcome.received.lowercased().contains("connection: close"), "\(outcome.received)")
        }
    }

    /// On the public port the answer is a 503, which Apple retries (a 4xx it may not): a notification delayed on the
    /// way is sent again, not lost.
    @Test func aBodyDrippedSlowerThanTheDeadlineIsAnswered503AndNothingIsStored() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(60), request: .milliseconds(300))) { port in
                let request = RawConnection.post("/notifications/apple", body: Self.body)
                let head = String(request.dropLast(Self.body.utf8.count))
                let outcome = try await RawConnection.run(port: port) { writer in
                    try await writer.write(ByteBuffer(string: head))
                    // 26 bytes 150 ms apart: about 4 s against the 300 ms deadline, so that a loaded machine's late
                    // timer still fires long before the body is whole.
                    try await RawConnection.drip(Self.body, every: .milliseconds(150), to: writer)
                }
                #expect(outcome.closedByServer)
                #expect(outcome.received.hasPrefix("HTTP/1.1 503"), "\(outcome.received)")
                #expect(outcome.received.contains(#""code":"request_timeout""#), "\(outcome.received)")
            }
            // The route reading the body got an error, not the bytes so far.
            #expect(try await db.scalar("SELECT count(*) FROM events") == 0)
        }
    }

    @Test func normalClientsAreServedAndTheirIdleKeepAliveConnectionIsClosedLater() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(5), request: .milliseconds(300))) { port in
                let request = RawConnection.post("/notifications/apple", body: Self.body)
                let outcome = try await RawConnection.run(port: port, bound: .seconds(30)) { writer in
                    try await writer.write(ByteBuffer(string: request))
                    // Waiting between requests is idle time, not request time: three request deadlines pass.
                    try await Task.sleep(for: .milliseconds(900))
                    try await writer.write(ByteBuffer(string: request))
                }
                #expect(outcome.received.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 2, "\(outcome.received)")
                #expect(!outcome.received.contains("HTTP/1.1 503"), "\(outcome.received)")
                #expect(outcome.closedByServer, "the keep-alive connection is closed once idle")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 2)
        }
    }

    /// A sender that sends `Expect: 100-continue` and waits for the interim answer before its body (curl does, for
    /// bodies over a size) gets `100 Continue` at once, then its 200 for the stored notification.
    @Test func aSenderWaitingFor100ContinueGetsItAndItsNotificationIsStored() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(10), request: .seconds(10))) { port in
                // The head without its blank line (a "\r\n" is one Character), then the headers and the blank line;
                // `Connection: close` so that the server closes once it answered.
                let head = String(RawConnection.post("/notifications/apple", body: Self.body).dropLast(Self.body.count).dropLast())
                let outcome = try await RawConnection.converse(port: port) { writer, received in
                    try await writer.write(ByteBuffer(string: head + "Expect: 100-continue\r\nConnection: close\r\n\r\n"))
                    guard try await eventually(within: .seconds(5), every: .milliseconds(10), { received().hasPrefix("HTTP/1.1 100 Continue\r\n") })
                    else { return }
                    try await writer.write(ByteBuffer(string: Self.body))
                }
                #expect(outcome.received.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), "\(outcome.received)")
                // Without the header, no interim answer.
                let plain = try await RawConnection.run(port: port) { writer in
                    try await writer.write(ByteBuffer(string: head + "Connection: close\r\n\r\n" + Self.body))
                }
                #expect(plain.received.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(plain.received)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 2)
        }
    }

    /// A request pipelined behind one still being stored waits for that answer before its own clock starts: the time
    /// it waits is the server's. Before, its deadline passed while the first was stored, and the connection was closed
    /// before the first notification's 200 was written.
    @Test func aRequestPipelinedBehindOneBeingStoredStartsItsClockAtThatAnswer() async throws {
        try await TestDatabase.withFresh { db in
            try await withReceiver(db, timeouts: HTTPTimeouts(idle: .seconds(20), request: .milliseconds(1500))) { port in
                let first = RawConnection.post("/notifications/apple", body: Self.body)
                // The second says `Connection: close`, so that the server closes once it answered both.
                let head = String(RawConnection.post("/notifications/apple", body: Self.body).dropLast(Self.body.count).dropLast())
                let second = head + "Connection: close\r\n\r\n" + Self.body
                let split = second.index(second.endIndex, offsetBy: -Self.body.count / 2)
                let outcome = try await RawConnection.run(port: port, bound: .seconds(30)) { writer in
                    // The first is stored only once the lock goes: 3.5 s, past the second's 1.5 s had its clock run, well
                    // within the store deadline. Its rest follows the first's answer by moments, which on a loaded
                    // machine can be most of a second.
                    try await db.withTableLocked("events", mode: "EXCLUSIVE") {
                        try await writer.write(ByteBuffer(string: first + second[..<split]))
                        try await Task.sleep(for: .milliseconds(3500))
                    }
                    try await writer.write(ByteBuffer(string: String(second[split...])))
                }
                #expect(outcome.received.components(separatedBy: "HTTP/1.1 200 OK").count - 1 == 2, "\(outcome.received)")
                #expect(!outcome.received.contains("HTTP/1.1 503"), "\(outcome.received)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM events") == 2)
        }
    }

    @Test func theAdminPortClosesIdleAndDrippingConnectionsToo() async throws {
        try await TestDatabase.withFresh { db in
            // Idle alone (the dripped head decodes to nothing, so only the idle timer runs), then the request deadline alone.
            // The idle timer runs from the accept, so it is 3 s: a normal client that the loaded machine holds back for a
            // second between connecting and writing is still served. The head drips for 8.6 s, then 4.3 s: seconds past
            // either limit, since an event loop the loaded machine did not schedule for a while reads the bytes that
            // arrived meanwhile before it runs the timers that fell due (a run once got the whole head, dripped over
            // 1.7 s, in before a 300 ms deadline's timer).
            let cases: [(timeouts: HTTPTimeouts, drip: Duration)] = [
                (HTTPTimeouts(idle: .seconds(3), request: .seconds(60)), .milliseconds(200)),
                (HTTPTimeouts(idle: .seconds(60), request: .milliseconds(300)), .milliseconds(100)),
            ]
            for (timeouts, drip) in cases {
                let admin = AdminApplication.service(
                    host: "127.0.0.1", port: 0, registry: PrometheusCollectorRegistry(), client: db.client, migrator: migrator,
                    timeouts: timeouts, logger: db.logger
                )
                try await admin.test(.live) { client in
                    let port = try #require(client.port)
                    let outcome = try await RawConnection.run(port: port) { writer in
                        try await RawConnection.drip("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", every: drip, to: writer)
                    }
                    #expect(outcome.closedByServer, "\(timeouts)")
                    #expect(!outcome.received.contains("200 OK"), "\(timeouts)")
                    #expect(outcome.received == "" || outcome.received.hasPrefix("HTTP/1.1 408"), "\(timeouts): the admin port answers 408")
                    let normal = try await RawConnection.run(port: port) { writer in
                        try await writer.write(ByteBuffer(string: "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
                    }
                    #expect(normal.received.hasPrefix("HTTP/1.1 200 OK"), "\(timeouts): \(normal.received.prefix(100))")
                }
            }
        }
    }
}
