package import Hummingbird
package import NIOCore

/// The request context of StoreLedger's HTTP routes: Hummingbird's core storage plus the peer
/// address, the request id and, on the app-facing routes, the authenticated caller.
package struct StoreLedgerRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage (logger, parameters, coders).
    package var coreContext: CoreRequestContextStorage
    /// The connected peer.
    package let remoteAddress: SocketAddress?
    /// The request id: the incoming `X-Request-ID`, or one generated for this request.
    package var requestID: String?
    /// Who is calling, once ``AuthenticationMiddleware`` has checked the credentials.
    package var caller: Caller?

    /// Creates the context for a request arriving on `source.channel`.
    package init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestID = nil
        self.caller = nil
    }
}
