public import Hummingbird
public import NIOCore

/// The request context of StoreLedger's HTTP routes: Hummingbird's core storage plus the peer
/// address, the request id and, on the app-facing routes, the authenticated caller.
public struct StoreLedgerRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage (logger, parameters, coders).
    public var coreContext: CoreRequestContextStorage
    /// The connected peer.
    public let remoteAddress: SocketAddress?
    /// The request id: the incoming `X-Request-ID`, or one generated for this request.
    public var requestID: String?
    /// Who is calling, once ``AuthenticationMiddleware`` has checked the credentials.
    public var caller: Caller?

    /// Creates the context for a request arriving on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestID = nil
        self.caller = nil
    }
}
