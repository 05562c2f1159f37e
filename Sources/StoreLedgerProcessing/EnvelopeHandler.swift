public import Logging
public import PostgresNIO
import StoreLedgerCore
public import StoreLedgerStore

/// A handler that only checks an event is a notification envelope (`{"signedPayload": "…"}`).
///
/// The backbone's stand-in before verification and projection; useful as a baseline in benchmarks.
/// Events whose body is not an envelope are rejected with the reason.
public struct EnvelopeHandler: EventHandler {
    /// Creates the handler.
    public init() {}

    /// Parses the envelope: `.done` when it is one, `.reject` with the reason when not.
    public func prepare(_ event: ClaimedEvent, logger: Logger) async -> EventOutcome {
        do {
            _ = try NotificationEnvelope.parse(event.body.readableBytesView)
            return .done
        } catch {
            return .reject(reason: "malformed envelope: \(error.description)")
        }
    }

    /// Writes nothing; returns the prepared outcomes.
    public func apply(_ batch: [EventOutcome], in transaction: PostgresConnection, logger: Logger) async throws -> [EventOutcome] {
        batch
    }
}
