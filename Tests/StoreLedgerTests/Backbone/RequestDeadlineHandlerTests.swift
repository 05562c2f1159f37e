import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import StoreLedgerHTTP
import Synchronization
import Testing

/// The request deadline when the event loop ran late (the socket-level tests are in ``HTTPTimeoutTests``): a loop the
/// machine did not run for a while reads the bytes that arrived meanwhile before it runs the timer that came due, so a
/// request whose deadline passed must not be taken because its last part was read first. The handler's clock is the
/// test's, moved without running the loop, as a starved loop sees it.
@Suite("HTTP: a request deadline that passed while the event loop was not running")
struct RequestDeadlineHandlerTests {
    /// A clock the test moves.
    final class TestClock: Sendable {
        private let time = Mutex(NIODeadline.uptimeNanoseconds(1_000_000_000))
        /// The time now.
        var now: NIODeadline { time.withLock { $0 } }
        /// Moves the time on by `amount`.
        func advance(by amount: TimeAmount) { time.withLock { $0 = $0 + amount } }
    }

    /// A connected channel with the handler (300 ms, answering 503) on `clock`.
    static func channel(_ clock: TestClock) throws -> EmbeddedChannel {
        let handler = RequestDeadlineHandler(
            timeout: .milliseconds(300), lateStatus: .serviceUnavailable, logger: Logger(label: "request-deadline-test"), clock: { clock.now })
        let channel = EmbeddedChannel(handler: handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return channel
    }

    /// The head of a POST whose body is still to come, after the bytes that carried it.
    static func sendHead(to channel: EmbeddedChannel) throws {
        channel.pipeline.fireUserInboundEventTriggered(RequestDeadlineHandler.BytesArrived())
        try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: .post, scheme: nil, authority: "127.0.0.1", path: "/notifications/apple")))
    }

    /// Whether the late part is announced by a read (`BytesArrived`, as the bytes of a socket read are) or only
    /// decoded (a part left in the decoder, decoded when the input ends): either way it is checked.
    @Test(arguments: [true, false])
    func aRequestWhoseLastPartIsReadAfterItsDeadlineIsAnsweredLateAndNotPassedOn(announced: Bool) throws {
        let clock = TestClock()
        let channel = try Self.channel(clock)
        try Self.sendHead(to: channel)
        #expect(try channel.readInbound(as: HTTPRequestPart.self) != nil)
        // 400 ms pass with the loop not running: its timer is due but has not run when the rest is read.
        clock.advance(by: .milliseconds(400))
        let error = #expect(throws: APIError.self) {
            if announced { channel.pipeline.fireUserInboundEventTriggered(RequestDeadlineHandler.BytesArrived()) }
            try channel.writeInbound(HTTPRequestPart.end(nil))
        }
        #expect(error?.code == "request_timeout", "the route reading the body is told")
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == nil, "the late end is not passed on")
        guard case .head(let answer) = try channel.readOutbound(as: HTTPResponsePart.self) else {
            Issue.record("no late answer written")
            return
        }
        #expect(answer.status == .serviceUnavailable)
        #expect(answer.headerFields[.connection] == "close")
        let active = channel.isActive  // (never the channel itself in an expectation: NIO's description of a closed pipeline traps)
        #expect(!active, "closed once the late answer was written")
        channel.embeddedEventLoop.run()
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test func aRequestWhoseLastPartArrivesInTimeIsPassedOn() throws {
        let clock = TestClock()
        let channel = try Self.channel(clock)
        try Self.sendHead(to: channel)
        _ = try channel.readInbound(as: HTTPRequestPart.self)
        clock.advance(by: .milliseconds(200))
        channel.pipeline.fireUserInboundEventTriggered(RequestDeadlineHandler.BytesArrived())
        try channel.writeInbound(HTTPRequestPart.end(nil))
        #expect(try channel.readInbound(as: HTTPRequestPart.self) == .end(nil))
        #expect(try channel.readOutbound(as: HTTPResponsePart.self) == nil)
        // The clock stopped with the end: time passing later closes nothing.
        clock.advance(by: .seconds(10))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        let active = channel.isActive  // (never the channel itself in an expectation: NIO's description of a closed pipeline traps)
        #expect(active)
        _ = try channel.finish()
    }
}
