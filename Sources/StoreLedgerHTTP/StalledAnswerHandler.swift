import Logging
import Metrics
import NIOCore

/// Closes a connection whose client does not take its answers: a write to it that makes no progress for `timeout`.
///
/// A client that sends requests and never reads (its receive window shut, on purpose or not) leaves an answer
/// unwritten, and the request task that writes it waiting, for as long as the client likes: Hummingbird's idle timeout
/// does not run while an answer is being written, and the ``RequestDeadlineHandler``'s clock stopped when the request
/// arrived. It sits in front of the encoder, nearest the socket, and counts a write as progress when it completes
/// (its bytes handed to the kernel); a slow reader that keeps reading keeps its connection.
final class StalledAnswerHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private let timeout: TimeAmount
    private let logger: Logger
    private let closures = Counter(label: "storeledger_http_stalled_answers_total")
    /// Writes passed on and not yet completed.
    private var unfinished = 0
    /// When the last write completed, or the first unfinished one was passed on.
    private var lastProgress = NIODeadline.now()
    /// The next check of the unfinished writes, while there are any.
    private var check: Scheduled<Void>?

    /// Creates the handler (one per connection).
    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    /// Passes the write on, counting it unfinished until its promise completes.
    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let written = promise ?? context.eventLoop.makePromise()
        if unfinished == 0 { lastProgress = .now() }
        unfinished += 1
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in handler.value.completed() }
        if check == nil { schedule(context, at: lastProgress + timeout) }
        context.write(data, promise: written)
    }

    /// Stops checking when the connection's pipeline is taken down.
    func handlerRemoved(context: ChannelHandlerContext) {
        check?.cancel()
        check = nil
    }

    private func completed() {
        unfinished -= 1
        lastProgress = .now()
    }

    private func schedule(_ context: ChannelHandlerContext, at deadline: NIODeadline) {
        check = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            check = nil
            guard unfinished > 0 else { return }
            let due = lastProgress + timeout
            guard due <= .now() else {
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
