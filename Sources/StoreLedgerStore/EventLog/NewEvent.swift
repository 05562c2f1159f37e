package import NIOCore
package import StoreLedgerCore

/// An input to append to the event log, with the request metadata an investigator needs.
package struct NewEvent: Sendable {
    /// How the event arrived.
    package var source: EventSource
    /// The environment the route implies, if any.
    package var environmentHint: EnvironmentHint?
    /// The route (path) it arrived on, if it came over HTTP.
    package var route: String?
    /// The body exactly as received.
    package var body: ByteBuffer
    /// The peer's address.
    package var remoteAddress: String?
    /// The request's `Content-Type`.
    package var contentType: String?
    /// The request's `User-Agent`.
    package var userAgent: String?
    /// The request id logged with it.
    package var requestID: String?
    /// The authenticated user who posted it (app-facing routes), so ownership can be rebuilt from the log.
    package var userID: String?

    /// Creates an event to append.
    package init(
        source: EventSource,
        environmentHint: EnvironmentHint? = nil,
        route: String? = nil,
        body: ByteBuffer,
        remoteAddress: String? = nil,
        contentType: String? = nil,
        userAgent: String? = nil,
        requestID: String? = nil,
        userID: String? = nil
    ) {
        self.source = source
        self.environmentHint = environmentHint
        self.route = route
        self.body = body
        self.remoteAddress = remoteAddress
        self.contentType = contentType
        self.userAgent = userAgent
        self.requestID = requestID
        self.userID = userID
    }
}
