import Logging
import NIOCore
import NIOEmbedded
import StoreLedgerHTTP
import Synchronization
import Testing

/// The check behind "a connection whose client does not take its answer is closed" (the socket-level test is in
/// ``HTTPTimeoutTests``), on an embedded channel whose clock the test moves: a write the client does not take (here:
/// written, never flushed) closes the connection after the timeout, progress restarts the clock, and a large buffer goes
/// out in slices, so that a slow reader's progress is seen before the whole buffer has gone.
@Suite("HTTP: an answer the client does not take")
struct StalledAnswerHandlerTests {
    /// A connected channel with the handler, its timeout 1 s.
    static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(handler: StalledAnswerHandler(timeout: .seconds(1), logger: Logger(label: "stalled-answer-test")))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return channel
    }

    /// Whether `promise` has failed, succeeded, or neither (the embedded loop runs callbacks at once).
    static func outcome(of promise: EventLoopPromise<Void>) -> String {
        let outcome = Mutex("unfinished")
        promise.futureResult.whenComplete { result in outcome.withLock { $0 = (try? result.get()) == nil ? "failed" : "written" } }
        return outcome.withLock { $0 }
    }

    @Test func aWriteThatMakesNoProgressForTheTimeoutClosesTheConnection() throws {
        let channel = try Self.channel()
        channel.write(IOData.byteBuffer(ByteBuffer(string: "HTTP/1.1 200 OK\r\n")), promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        let activeBefore = channel.isActive  // (never the channel itself in an expectation: NIO's description of a closed pipeline traps)
        #expect(activeBefore)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(200))
        let activeAfter = channel.isActive
        #expect(!activeAfter)
    }

    @Test func progressRestartsTheClockAndAnIdleConnectionIsNotItsBusiness() throws {
        let channel = try Self.channel()
        channel.write(IOData.byteBuffer(ByteBuffer(string: "first")), promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        channel.flush()  // the first write completes: progress
        channel.write(IOData.byteBuffer(ByteBuffer(string: "second")), promise: nil)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(900))
        let activeWhileSecondIsUnfinished = channel.isActive
        #expect(activeWhileSecondIsUnfinished, "the second write's clock began at the first's completion")
        channel.flush()
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        let activeWhenIdle = channel.isActive
        #expect(activeWhenIdle, "nothing unfinished: idle connections are the idle timeout's")
        _ = try channel.finish()
    }

    @Test func aLargeBufferGoesOutInSlicesWithTheCallersPromiseOnTheLast() throws {
        let channel = try Self.channel()
        let slice = StalledAnswerHandler.sliceBytes
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(IOData.byteBuffer(ByteBuffer(repeating: 0x61, count: 3 * slice + 100)), promise: written)
        var sizes: [Int] = []
        while let piece = try channel.readOutbound(as: IOData.self) { sizes.append(piece.readableBytes) }
        #expect(sizes == [slice, slice, slice, 100])
        #expect(Self.outcome(of: written) == "written")
        _ = try channel.finish()
    }
}
