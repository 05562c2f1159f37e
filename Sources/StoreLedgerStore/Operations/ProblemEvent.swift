package import Foundation

/// An event parked by the queue (rejected or dead), as the console's queue page lists it.
package struct ProblemEvent: Sendable, Equatable {
    /// The event id.
    package var id: Int64
    /// `rejected` or `dead`.
    package var state: String
    /// Why: the reject reason, or the last error of a dead event.
    package var reason: String?
    /// Attempts made.
    package var attempts: Int
    /// When it was received.
    package var receivedAt: Date
    /// When it was parked.
    package var finishedAt: Date?
}
