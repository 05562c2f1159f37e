import Foundation
package import Logging
package import PostgresNIO
import StoreLedgerCore

/// Reads the event log in id order, for rebuilds.
package enum EventPage {
    /// The highest event id so far (0 when the log is empty).
    package static func highestID(on connection: PostgresConnection, logger: Logger) async throws -> Int64 {
        try await connection.query("SELECT coalesce(max(id), 0) FROM events", logger: logger).decode(Int64.self).firstAfterReadingAll() ?? 0
    }

    /// How many of the events `ids` the workers finished as `done`.
    package static func countDone(_ ids: [Int64], on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await connection.query(
            "SELECT count(*) FROM event_queue WHERE state = 'done' AND event_id = ANY(\(ids)::int8[])", logger: logger
        ).decode(Int.self).firstAfterReadingAll() ?? 0
    }

    /// How many queue rows name an event the log no longer holds (its month detached for archiving).
    package static func countArchived(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await connection.query(
            """
            SELECT count(*) FROM event_queue q
            WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.id = q.event_id AND e.received_at = q.event_received_at)
            """,
            logger: logger
        ).decode(Int.self).firstAfterReadingAll() ?? 0
    }

    /// How many events have an id in `(after, through]`.
    package static func count(after: Int64, through: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        try await connection.query(
            "SELECT count(*) FROM events WHERE id > \(after) AND id <= \(through)", logger: logger
        ).decode(Int.self).firstAfterReadingAll() ?? 0
    }

    /// Up to `limit` events with ids in `(after, through]`, oldest first, as the handler takes them.
    package static func read(
        after: Int64, through: Int64, limit: Int, on connection: PostgresConnection, logger: Logger
    ) async throws -> [ClaimedEvent] {
        try await events(
            """
            SELECT id, received_at, source, environment_hint, body, request_id FROM events
            WHERE id > \(after) AND id <= \(through) ORDER BY id LIMIT \(limit)
            """,
            on: connection, logger: logger
        )
    }

    /// The events with an id in any of `ranges`, oldest first, as the handler takes them.
    package static func read(in ranges: [ClosedRange<Int64>], on connection: PostgresConnection, logger: Logger) async throws -> [ClaimedEvent] {
        guard !ranges.isEmpty else { return [] }
        return try await events(
            """
            SELECT e.id, e.received_at, e.source, e.environment_hint, e.body, e.request_id
            FROM unnest(\(ranges.map(\.lowerBound))::int8[], \(ranges.map(\.upperBound))::int8[]) AS r (low, high)
            JOIN events e ON e.id BETWEEN r.low AND r.high
            ORDER BY e.id
            """,
            on: connection, logger: logger
        )
    }

    /// Runs `query`, which selects an event's id, received_at, source, environment_hint, body and request_id.
    private static func events(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> [ClaimedEvent] {
        var events: [ClaimedEvent] = []
        for try await (id, receivedAt, source, hint, body, requestID) in try await connection.query(query, logger: logger)
            .decode((Int64, Date, String, String?, ByteBuffer, String?).self)
        {
            events.append(
                ClaimedEvent(
                    id: EventID(id), attempt: 1, receivedAt: receivedAt, source: EventSource(rawValue: source) ?? .appleNotification,
                    environmentHint: hint.flatMap(EnvironmentHint.init(rawValue:)), body: body.inOwnStorage(), requestID: requestID
                ))
        }
        return events
    }
}
