package import Logging
import Metrics
package import NIOCore

/// Closes a connection whose client does not take its answers: a write to it that makes no progress for `timeout`.
///
/// A client that sends requests and never reads (its receive window shut, on purpose or not) leaves an answer
/// unwritten, and the request task that writes it waiting, for as long as the client likes: Hummingbird's idle timeout
/// does not run while an answer is being written, and the ``RequestDeadlineHandler``'s clock stopped when the request
/// arrived. It sits in front of the encoder, nearest the socket, and counts a write as progress when it completes
/// (its bytes handed to the kernel). A large buffer (a console page, a CSV export) is passed on in slices of
/// ``sliceBytes``, each its own progress, so a slow reader that takes at least that much per timeout keeps its
/// connection.
package final class StalledAnswerHandler: ChannelOutboundHandler, RemovableChannelHandler {
    /// What reaches the socket.
    package typealias OutboundIn = IOData
    /// The same, in slices.
    package typealias OutboundOut = IOData

    /// The most a client must take per timeout to keep its connection: buffers larger than this are passed on in
    /// slices of this size.
    package static let sliceBytes = 64 * 1024

    private let timeout: TimeAmount
    private let logger: Logger
    private let closures = Counter(label: "storeledger_http_stalled_answers_total")
    /// Writes passed on and not yet completed.
    private var unfinished = 0
    /// When the last write completed, or the first unfinished one was passed on.
    private var lastProgress = NIODeadline.uptimeNanoseconds(0)
    /// The next check of the unfinished writes, while there are any.
    private var check: Scheduled<Void>?

    /// Creates the handler (one per connection).
    package init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    /// Passes the write on (a large buffer in slices), counting each piece unfinished until its promise completes.
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .byteBuffer(var buffer) = unwrapOutboundIn(data), buffer.readableBytes > Self.sliceBytes {
            while buffer.readableBytes > Self.sliceBytes, let slice = buffer.readSlice(length: Self.sliceBytes) {
                pass(wrapOutboundOut(.byteBuffer(slice)), promise: nil, context: context)
            }
            pass(wrapOutboundOut(.byteBuffer(buffer)), promise: promise, context: context)
        } else {
            pass(data, promise: promise, context: context)
        }
    }

    /// Stops checking when the connection's pipeline is taken down.
    package func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    private func pass(_ data: NIOAny, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        let written = promise ?? context.eventLoop.makePromise()
        if unfinished == 0 { lastProgress = context.eventLoop.now }
        unfinished += 1
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        written.futureResult.whenComplete { _ in handler.value.completed(at: loop.now) }
        if check == nil { schedule(context, at: lastProgress + timeout) }
        context.write(data, promise: written)
    }

    private func completed(at now: NIODeadline) {
        unfinished -= 1
        lastProgress = now
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            check = nil
            guard unfinished > 0 else { return }
            let due = lastProgress + timeout
            guard due <= context.eventLoop.now else {
                schedule(context, at: due)
                return
            }
            closures.increment()
            logger.notice(
                "closing a connection whose client has not taken its answer",
                metadata: [
                    "remote_address": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")", "timeout": "\(timeout)",
                ])
            context.close(promise: nil)
        }
    }
}
