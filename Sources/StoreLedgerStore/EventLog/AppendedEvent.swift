package import Foundation
package import StoreLedgerCore

/// What the log assigned to an appended event.
package struct AppendedEvent: Sendable, Hashable {
    /// The event's identity.
    package let id: EventID
    /// When the database received it (the partition key).
    package let receivedAt: Date

    /// Creates the record of an appended event.
    package init(id: EventID, receivedAt: Date) {
        self.id = id
        self.receivedAt = receivedAt
    }
}
