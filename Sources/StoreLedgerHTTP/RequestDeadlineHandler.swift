package import Hummingbird
package import Logging
import Metrics
package import NIOCore
package import NIOHTTPTypes

/// Gives each request a deadline: it must arrive in full (head and body) within ``HTTPTimeouts/request`` of its first
/// byte, or the connection is closed. Hummingbird's idle timeout does not cover this: it restarts on every body part,
/// and a request head that arrives byte by byte is invisible to it.
///
/// It sits behind the HTTP decoder, where requests have boundaries; its ``ByteObserver`` sits in front of the decoder
/// and tells it when bytes arrive, so the clock starts at a request's first byte, not at its complete head. A request
/// pipelined behind one not yet answered starts its clock when that answer has been written: the time it waits is the
/// server's, not the sender's, and a deadline passing meanwhile would close the connection before the earlier answer
/// (the 200 of a notification already committed) was sent. When the
/// deadline passes it fails the request's body stream (a route reading it gets an error, never a truncated body),
/// answers its ``lateStatus`` (408, or 503 on the public port, where Apple retries a 5xx and perhaps no 4xx) when a
/// request head arrived and nothing is being answered on the connection, and closes it.
///
/// An event loop that the machine did not run for a while reads the bytes that arrived meanwhile before it runs the
/// timers that came due: so each read checks the deadline too, and a request whose deadline passed is not taken
/// because its last bytes were read before the timer ran; what arrives after the deadline is dropped.
package final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPRequestPart
    package typealias InboundOut = HTTPRequestPart
    package typealias OutboundIn = HTTPResponsePart
    package typealias OutboundOut = HTTPResponsePart

    /// The event ``ByteObserver`` sends along the pipeline when bytes arrive.
    package struct BytesArrived {
        /// Creates the event.
        package init() {}
    }

    /// Placed before the HTTP decoder: reports each read to the ``RequestDeadlineHandler`` behind it.
    final class ByteObserver: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        /// Creates the observer.
        init() {}

        /// Reports the read, then passes the bytes on to the decoder.
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            context.fireUserInboundEventTriggered(BytesArrived())
            context.fireChannelRead(data)
        }
    }

    private let timeout: TimeAmount
    /// What a request that did not arrive in time is answered (`request_timeout` either way).
    private let lateStatus: HTTPResponse.Status
    private let logger: Logger
    private let expirations = Counter(label: "storeledger_http_request_timeouts_total")
    /// The running deadline of the request being received, if any.
    private var deadline: Scheduled<Void>?
    /// When the running deadline passes.
    private var deadlineAt: NIODeadline?
    /// Whether the deadline passed: the connection is closing, and what arrives now is dropped.
    private var expired = false
    /// The time, when not the event loop's (a test's clock).
    private let clock: (@Sendable () -> NIODeadline)?
    /// Whether bytes of a request arrived while an earlier one was still unanswered: its clock starts at that answer.
    private var startWhenAnswered = false
    /// Whether the head of the request being received has been decoded.
    private var headArrived = false
    /// Whether the server has begun to shut down (`ChannelShouldQuiesceEvent`).
    private var quiescing = false
    private var headsReceived = 0
    private var responseHeadsWritten = 0
    private var responseEndsWritten = 0

    /// Creates the handler (one per connection); a late request is answered `lateStatus` (default 408). `clock`
    /// replaces the event loop's time (tests).
    package init(
        timeout: TimeAmount, lateStatus: HTTPResponse.Status = .requestTimeout, logger: Logger, clock: (@Sendable () -> NIODeadline)? = nil
    ) {
        self.timeout = timeout
        self.lateStatus = lateStatus
        self.logger = logger
        self.clock = clock
    }

    /// Starts the clock when a request's first bytes arrive; notes when the server begins to shut down.
    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is BytesArrived {
            if !expireIfDue(context) { startIfNeeded(context) }
        } else {
            if event is ChannelShouldQuiesceEvent { quiescing = true }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Follows the request's parts: the clock stops when its end has arrived, unless the deadline passed first.
    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !expireIfDue(context) else { return }
        switch unwrapInboundIn(data) {
        case .head:
            startIfNeeded(context)  // a pipelined head decoded from bytes that arrived with the previous request
            headArrived = true
            headsReceived += 1
        case .body:
            break
        case .end:
            stop()
            headArrived = false
        }
        context.fireChannelRead(data)
    }

    /// Counts the answers, to know whether the late answer may still be written (an interim `100 Continue` is no
    /// answer). Once the server shuts down, the answer to the last request received says `Connection: close`: the
    /// server closes the connection after it, and a client or load balancer that pooled the connection must not send
    /// its next request into that close.
    package func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head):
            if head.status.kind != .informational {
                responseHeadsWritten += 1
                // Only the answer to the last request received: the server still answers pipelined requests behind
                // it, which a client told "close" would discard (and perhaps send again).
                if quiescing, responseHeadsWritten == headsReceived {
                    head.headerFields[.connection] = "close"
                    context.write(wrapOutboundOut(.head(head)), promise: promise)
                    return
                }
            }
        case .body: break
        case .end:
            responseEndsWritten += 1
            if startWhenAnswered, responseEndsWritten == earlierRequests {
                startWhenAnswered = false
                startIfNeeded(context)
            }
        }
        context.write(data, promise: promise)
    }

    /// Stops the clock with the connection.
    package func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    /// Stops the clock when removed.
    package func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    /// The requests before the one being received (or, between requests, every request so far).
    private var earlierRequests: Int { headArrived ? headsReceived - 1 : headsReceived }

    private func startIfNeeded(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        guard responseEndsWritten == earlierRequests else {
            startWhenAnswered = true
            return
        }
        deadlineAt = now(context) + timeout
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            expire(context)
        }
    }

    private func stop() {
        deadline?.cancel()
        deadline = nil
        deadlineAt = nil
        startWhenAnswered = false
    }

    private func now(_ context: ChannelHandlerContext) -> NIODeadline {
        clock?() ?? context.eventLoop.now
    }

    /// Whether the deadline has passed (expiring now if its timer has not run yet): the read is then dropped.
    private func expireIfDue(_ context: ChannelHandlerContext) -> Bool {
        if expired { return true }
        guard let deadlineAt, now(context) >= deadlineAt else { return false }
        deadline?.cancel()
        expire(context)
        return true
    }

    private func expire(_ context: ChannelHandlerContext) {
        deadline = nil
        deadlineAt = nil
        expired = true
        expirations.increment()
        logger.notice(
            "closing a connection whose request did not arrive in time",
            metadata: [
                "remote_address": "\(context.channel.remoteAddress.map { "\($0)" } ?? "?")",
                "timeout": "\(timeout)",
                "head_received": "\(headArrived)",
            ])
        // A route still reading this request's body gets an error instead of the bytes so far.
        context.fireErrorCaught(APIError(lateStatus, code: "request_timeout", message: "the request did not arrive in time; send it again"))
        // The late answer only when it cannot be mistaken for the answer to an earlier request: every earlier request is answered
        // and nothing has been written for this one.
        let earlier = earlierRequests
        guard headArrived, responseHeadsWritten == earlier, responseEndsWritten == earlier else {
            context.close(promise: nil)
            return
        }
        let seconds = Double(timeout.nanoseconds) / 1e9
        let body = ByteBuffer(string: #"{"code":"request_timeout","error":"the request did not arrive in full within \#(seconds) s; send it again"}"#)
        let head = HTTPResponse(
            status: lateStatus,
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: "\(body.readableBytes)", .connection: "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
    }
}
