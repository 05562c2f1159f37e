import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A raw TCP connection to a server on 127.0.0.1, for tests that must misbehave byte by byte. Every wait is bounded.
enum RawConnection {
    /// What happened on the connection.
    struct Outcome: Sendable {
        /// Everything the server sent, as text.
        var received: String
        /// Whether the server closed (or reset) the connection before the bound.
        var closedByServer: Bool
    }

    /// Connects to `127.0.0.1:port`, runs `send` with the connection's writer while collecting what the server sends,
    /// and returns when the server closes the connection or `bound` has passed since connecting, whichever is first.
    static func run(
        port: Int, bound: Duration = .seconds(10), send: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws -> Void
    ) async throws -> Outcome {
        try await converse(port: port, bound: bound) { writer, _ in try await send(writer) }
    }

    /// ``run(port:bound:send:)`` for a sender that reacts to what the server sent so far (`received()`).
    static func converse(
        port: Int, bound: Duration = .seconds(10),
        send: @escaping @Sendable (NIOAsyncChannelOutboundWriter<ByteBuffer>, _ received: @escaping @Sendable () -> String) async throws -> Void
    ) async throws -> Outcome {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let received = NIOLockedValueBox(ByteBuffer())
        return try await channel.executeThenClose { inbound, outbound in
            let closed = try await withThrowingTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        for try await chunk in inbound { received.withLockedValue { _ = $0.writeImmutableBuffer(chunk) } }
                    } catch {
                        // A reset is the server closing too.
                    }
                    return !Task.isCancelled
                }
                group.addTask {
                    try? await send(outbound) { String(buffer: received.withLockedValue { $0 }) }
                    return nil
                }
                group.addTask {
                    try? await Task.sleep(for: bound)
                    return false
                }
                while let result = try await group.next() {
                    guard let result else { continue }
                    group.cancelAll()
                    return result
                }
                return false
            }
            return Outcome(received: String(buffer: received.withLockedValue { $0 }), closedByServer: closed)
        }
    }

    /// Connects to `127.0.0.1:port` with a small receive window and never reads: writes `request` over and over,
    /// pipelined, a hundred at a time, each batch once the one before has gone to the kernel (so that the writing
    /// neither spins nor floods the event loops other tests share), until the server closes the connection or `bound`
    /// has passed. Returns how long the server took to close it, or nil if it was still open at the bound.
    static func pipelineWithoutReading(_ request: String, port: Int, bound: Duration) async throws -> Duration? {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.autoRead, value: false)
            .channelOption(.socketOption(.so_rcvbuf), value: 4_096)
            .connect(host: "127.0.0.1", port: port).get()
        let chunk = ByteBuffer(string: String(repeating: request, count: 100))
        let start = ContinuousClock.now
        return try await withThrowingTaskGroup(of: Duration?.self) { group in
            group.addTask {
                do {
                    while true { try await channel.writeAndFlush(chunk) }
                } catch {
                    return start.duration(to: .now)  // the server closed (reset) the connection
                }
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return nil
            }
            let first = try await group.next() ?? nil
            channel.close(promise: nil)  // fails a write still waiting, should the bound have come first
            group.cancelAll()
            return first
        }
    }

    /// Writes `text` one byte at a time, `interval` apart (bounded by the text's length).
    static func drip(_ text: String, every interval: Duration, to writer: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        for byte in Array(text.utf8) {
            try await writer.write(ByteBuffer(bytes: [byte]))
            try await Task.sleep(for: interval)
        }
    }

    /// An HTTP/1.1 POST of `body` to `path`.
    static func post(_ path: String, body: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }
}
