package import HTTPTypes
package import HummingbirdCore
package import Logging
import NIOCore

extension HTTPServerBuilder {
    /// An HTTP/1 server that enforces `timeouts`: Hummingbird's idle timeout for connections with no request in
    /// progress, a ``RequestDeadlineHandler`` for requests that arrive too slowly, and a ``StalledAnswerHandler`` for
    /// answers the client does not take within the idle timeout; an ``ExpectContinueHandler``
    /// answers `Expect: 100-continue`. Both StoreLedger listeners (the public port and the admin port) are built with it.
    /// A request that does not arrive in time is answered `lateStatus`: 408, or 503 where a 5xx is what makes the sender
    /// (Apple) send it again.
    package static func http1(
        timeouts: HTTPTimeouts, lateStatus: HTTPResponse.Status = .requestTimeout, logger: Logger
    ) -> HTTPServerBuilder {
        let request = TimeAmount(timeouts.request)
        let idle = TimeAmount(timeouts.idle)
        let configuration = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestDeadlineHandler(timeout: request, lateStatus: lateStatus, logger: logger), ExpectContinueHandler()],
            idleTimeout: idle
        )
        return HTTPServerBuilder { responder in
            DeadlineHTTP1Channel(base: HTTP1Channel(responder: responder, configuration: configuration), answerTimeout: idle)
        }
    }
}

/// Hummingbird's HTTP/1 child channel with a ``RequestDeadlineHandler/ByteObserver`` in front of its HTTP decoder and a
/// ``StalledAnswerHandler`` in front of its encoder.
struct DeadlineHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    /// The channel it extends.
    let base: HTTP1Channel
    /// How long an answer may make no progress before the connection is closed (the idle timeout).
    let answerTimeout: TimeAmount

    /// Adds the observer and the stall check first, then Hummingbird's pipeline behind them.
    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(RequestDeadlineHandler.ByteObserver(), position: .first)
            try channel.pipeline.syncOperations.addHandler(StalledAnswerHandler(timeout: answerTimeout, logger: logger), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    /// Serves the connection as Hummingbird does.
    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
