public import Foundation

/// An event parked by the queue (rejected or dead), as the console's queue page lists it.
public struct ProblemEvent: Sendable, Equatable {
    /// The event id.
    public var id: Int64
    /// `rejected` or `dead`.
    public var state: String
    /// Why: the reject reason, or the last error of a dead event.
    public var reason: String?
    /// Attempts made.
    public var attempts: Int
    /// When it was received.
    public var receivedAt: Date
    /// When it was parked.
    public var finishedAt: Date?
}
