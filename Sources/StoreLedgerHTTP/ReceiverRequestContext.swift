public import Hummingbird
public import NIOCore

/// The request context of StoreLedger's HTTP routes: Hummingbird's core storage plus the peer
/// address and the request id.
public struct ReceiverRequestContext: RequestContext, RemoteAddressRequestContext {
    /// Hummingbird's per-request storage (logger, parameters, coders).
    public var coreContext: CoreRequestContextStorage
    /// The connected peer.
    public let remoteAddress: SocketAddress?
    /// The request id: the incoming `X-Request-ID`, or one generated for this request.
    public var requestID: String?

    /// Creates the context for a request arriving on `source.channel`.
    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.requestID = nil
    }
}
