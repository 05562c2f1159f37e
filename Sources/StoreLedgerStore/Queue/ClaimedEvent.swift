public import Foundation
public import NIOCore
public import StoreLedgerCore

/// An event a worker has claimed, with its raw body and the lease that fences its completion.
public struct ClaimedEvent: Sendable {
    /// The event's identity.
    public let id: EventID
    /// Which attempt this is (1 for the first); completion is fenced on it.
    public let attempt: Int
    /// When the log received it.
    public let receivedAt: Date
    /// How it arrived.
    public let source: EventSource
    /// The environment its route implied.
    public let environmentHint: EnvironmentHint?
    /// The body exactly as received.
    public let body: ByteBuffer
    /// The request id it was received under.
    public let requestID: String?

    /// Creates a claimed event.
    public init(
        id: EventID, attempt: Int, receivedAt: Date, source: EventSource,
        environmentHint: EnvironmentHint?, body: ByteBuffer, requestID: String?
    ) {
        self.id = id
        self.attempt = attempt
        self.receivedAt = receivedAt
        self.source = source
        self.environmentHint = environmentHint
        self.body = body
        self.requestID = requestID
    }
}
