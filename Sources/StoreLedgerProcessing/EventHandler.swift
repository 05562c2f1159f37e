package import Logging
package import PostgresNIO
package import StoreLedgerStore

/// The one seam every caller of processing goes through: the worker's claim loop, the app-facing
/// API (inline) and rebuild.
///
/// Processing is two-phase so that no database connection is held during CPU work:
/// ``prepare(_:logger:)`` parses and verifies one event with no I/O to Postgres, then
/// ``apply(_:in:logger:)`` writes the effects of a whole batch inside the caller's transaction,
/// which also records the outcomes. Throwing from `apply` rolls the batch back and retries it.
package protocol EventHandler: Sendable {
    /// What `prepare` hands to `apply` for one event.
    associatedtype Prepared: Sendable

    /// Parses and verifies one event without touching the database.
    func prepare(_ event: ClaimedEvent, logger: Logger) async -> Prepared

    /// Writes the effects of a prepared batch in `transaction`; returns one outcome per element, in order.
    func apply(_ batch: [Prepared], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome]
}
