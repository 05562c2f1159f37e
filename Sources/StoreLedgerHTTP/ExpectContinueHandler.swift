import Foundation
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with the interim `100 Continue` as soon as the request head arrives, so a sender that
/// waits for it before its body (curl does for bodies over a size, some HTTP libraries always) sends it at once instead
/// of after its own timeout, or never. Hummingbird does not answer it; a route that refuses the request (a 413 for a
/// declared length over the limit) still answers after the body, as RFC 9110 allows.
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Creates the handler (one per connection).
    init() {}

    /// Sends `100 Continue` for a head that expects it, then passes every part on.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let request) = unwrapInboundIn(data), Self.expectsContinue(request) {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }

    /// Whether the request asks for `100 Continue` (`Expect: 100-continue`, in any case).
    static func expectsContinue(_ request: HTTPRequest) -> Bool {
        request.headerFields[.expect].map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "100-continue" } ?? false
    }
}
