package import Foundation
package import NIOCore
package import StoreLedgerCore

/// An event a worker has claimed, with its raw body and the lease that fences its completion.
package struct ClaimedEvent: Sendable {
    /// The event's identity.
    package let id: EventID
    /// Which attempt this is (1 for the first); completion is fenced on it.
    package let attempt: Int
    /// When the log received it.
    package let receivedAt: Date
    /// How it arrived.
    package let source: EventSource
    /// The environment its route implied.
    package let environmentHint: EnvironmentHint?
    /// The body exactly as received.
    package let body: ByteBuffer
    /// The request id it was received under.
    package let requestID: String?

    /// Creates a claimed event.
    package init(
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
