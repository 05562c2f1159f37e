package import Logging
package import PostgresNIO
import StoreLedgerCore
package import StoreLedgerStore

/// A handler that only checks an event is a notification envelope (`{"signedPayload": "…"}`).
///
/// The backbone's stand-in before verification and projection; useful as a baseline in benchmarks.
/// Events whose body is not an envelope are rejected with the reason.
package struct EnvelopeHandler: EventHandler {
    /// Creates the handler.
    package init() {}

    /// Parses the envelope: `.done` when it is one, `.reject` with the reason when not.
    package func prepare(_ event: ClaimedEvent, logger: Logger) async -> EventOutcome {
        do {
            _ = try NotificationEnvelope.parse(event.body.readableBytesView)
            return .done
        } catch {
            return .reject(reason: "malformed envelope: \(error.description)")
        }
    }

    /// Writes nothing; returns the prepared outcomes.
    package func apply(_ batch: [EventOutcome], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        batch
    }
}
