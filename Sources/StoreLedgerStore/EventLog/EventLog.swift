public import Logging
public import PostgresNIO
import StoreLedgerCore

/// The append-only event log: every accepted input, byte for byte, with its queue row.
public struct EventLog: Sendable {
    /// The Postgres client the log writes through.
    public let client: PostgresClient
    /// How the append reaches Postgres (the process's pooler and prepared sessions).
    public let sessions: DatabaseSessions

    /// Creates a log over `client`, appending as `sessions` allow (default: a direct connection).
    public init(client: PostgresClient, sessions: DatabaseSessions = DatabaseSessions()) {
        self.client = client
        self.sessions = sessions
    }

    /// Appends an event and its pending queue row in one statement and one transaction. Returns only after the
    /// database confirmed the commit, so a caller may acknowledge the input; throws when it did not.
    public func append(_ event: NewEvent, logger: Logger) async throws -> AppendedEvent {
        try await client.inTransaction(logger: logger, sessions: sessions) { [sessions] connection in
            try await Self.append(event, on: connection, sessions: sessions, logger: logger)
        }
    }

    /// Appends an event and its queue row on an existing connection, inside the caller's transaction (which must
    /// commit before anything is acknowledged, and which was opened with the same `sessions`).
    public static func append(
        _ event: NewEvent, on connection: PostgresConnection, sessions: DatabaseSessions, logger: Logger
    ) async throws -> AppendedEvent {
        guard let (id, receivedAt) = try await sessions.run(AppendStatement(event: event), on: connection, logger: logger).first else {
            throw StoreError(code: .invariantBroken, detail: "the event insert returned no row")
        }
        return AppendedEvent(id: EventID(id), receivedAt: receivedAt)
    }

    /// Creates monthly partitions from this month through `monthsAhead` months ahead; returns how
    /// many it created. Idempotent; workers call it periodically.
    @discardableResult
    public func ensurePartitions(monthsAhead: Int = 3, logger: Logger) async throws -> Int {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("SELECT storeledger_ensure_event_partitions(\(monthsAhead)::int4)", logger: logger)
                .decode(Int.self).firstAfterReadingAll() ?? 0
        }
    }
}
