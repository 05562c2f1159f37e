public import Logging
public import PostgresNIO
import StoreLedgerCore

/// The append-only event log: every accepted input, byte for byte, with its queue row.
public struct EventLog: Sendable {
    /// The Postgres client the log writes through.
    public let client: PostgresClient

    /// Creates a log over `client`.
    public init(client: PostgresClient) {
        self.client = client
    }

    /// Appends an event and its pending queue row in one statement (one round trip, one
    /// transaction). Returns only after the commit, so a caller may acknowledge the input.
    public func append(_ event: NewEvent, logger: Logger) async throws -> AppendedEvent {
        for try await (id, receivedAt) in try await client.execute(AppendStatement(event: event), logger: logger) {
            return AppendedEvent(id: EventID(id), receivedAt: receivedAt)
        }
        throw StoreError(code: .unavailable, detail: "the event insert returned no row")
    }

    /// Appends an event and its queue row on an existing connection (inside the caller's transaction).
    public static func append(_ event: NewEvent, on connection: PostgresConnection, logger: Logger) async throws -> AppendedEvent {
        for try await (id, receivedAt) in try await connection.execute(AppendStatement(event: event), logger: logger) {
            return AppendedEvent(id: EventID(id), receivedAt: receivedAt)
        }
        throw StoreError(code: .unavailable, detail: "the event insert returned no row")
    }

    /// Creates monthly partitions from this month through `monthsAhead` months ahead; returns how
    /// many it created. Idempotent; workers call it periodically.
    @discardableResult
    public func ensurePartitions(monthsAhead: Int = 3, logger: Logger) async throws -> Int {
        let rows = try await client.query(
            "SELECT storeledger_ensure_event_partitions(\(monthsAhead)::int4)",
            logger: logger
        )
        for try await created in rows.decode(Int.self) { return created }
        return 0
    }
}
