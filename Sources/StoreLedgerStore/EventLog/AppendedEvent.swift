public import Foundation
public import StoreLedgerCore

/// What the log assigned to an appended event.
public struct AppendedEvent: Sendable, Hashable {
    /// The event's identity.
    public let id: EventID
    /// When the database received it (the partition key).
    public let receivedAt: Date

    /// Creates the record of an appended event.
    public init(id: EventID, receivedAt: Date) {
        self.id = id
        self.receivedAt = receivedAt
    }
}
