import Crypto
import Foundation
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
        let rows = try await client.query(try Self.appendQuery(event), logger: logger)
        for try await (id, receivedAt) in rows.decode((Int64, Date).self) {
            return AppendedEvent(id: EventID(id), receivedAt: receivedAt)
        }
        throw StoreError(code: .unavailable, detail: "the event insert returned no row")
    }

    /// Appends an event and its queue row on an existing connection (inside the caller's transaction).
    public static func append(_ event: NewEvent, on connection: PostgresConnection, logger: Logger) async throws -> AppendedEvent {
        let rows = try await connection.query(try appendQuery(event), logger: logger)
        for try await (id, receivedAt) in rows.decode((Int64, Date).self) {
            return AppendedEvent(id: EventID(id), receivedAt: receivedAt)
        }
        throw StoreError(code: .unavailable, detail: "the event insert returned no row")
    }

    /// The single statement that inserts the event and enqueues it.
    static func appendQuery(_ event: NewEvent) throws -> PostgresQuery {
        let digest = Data(SHA256.hash(data: event.body.readableBytesView))
        return try """
            WITH appended AS (
                INSERT INTO events (source, environment_hint, route, body, body_sha256,
                                    remote_address, content_type, user_agent, request_id)
                VALUES (\(event.source.rawValue), \(event.environmentHint?.rawValue), \(event.route), \(event.body),
                        \(digest), \(event.remoteAddress), \(event.contentType), \(event.userAgent), \(event.requestID))
                RETURNING id, received_at
            )
            INSERT INTO event_queue (event_id, event_received_at)
            SELECT id, received_at FROM appended
            RETURNING event_id, event_received_at
            """
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
