package import Logging
package import PostgresNIO
import StoreLedgerCore

/// The append-only event log: every accepted input, byte for byte, with its queue row.
package struct EventLog: Sendable {
    /// The Postgres client the log writes through.
    package let client: PostgresClient
    /// How the append reaches Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions
    /// Where ``append(_:logger:)`` batches concurrent appends into shared transactions.
    private let groupCommit: GroupCommit

    /// Creates a log over `client`, appending as `sessions` allow (default: a direct connection), whose
    /// ``append(_:logger:)`` keeps at most `concurrentCommits` transactions (and pooled connections) in flight;
    /// appends arriving meanwhile share the next one (see ``GroupCommit``), and while more than `maxWaitingBytes` of
    /// bodies wait for one, a new append is refused at once. A transaction not finished within `commitTimeout` is
    /// left behind, its callers answered with an error (give at least as long as the callers wait: the receiver's store
    /// deadline).
    package init(
        client: PostgresClient, sessions: DatabaseSessions = DatabaseSessions(), concurrentCommits: Int = EventLog.defaultConcurrentCommits,
        maxWaitingBytes: Int = EventLog.defaultMaxWaitingBytes, commitTimeout: Duration = EventLog.defaultCommitTimeout
    ) {
        self.client = client
        self.sessions = sessions
        self.groupCommit = GroupCommit(
            client: client, sessions: sessions, concurrentCommits: concurrentCommits, commitTimeout: commitTimeout,
            maxWaitingBytes: maxWaitingBytes)
    }

    /// The default for ``init(client:sessions:concurrentCommits:maxWaitingBytes:commitTimeout:)``: 10 s.
    package static let defaultCommitTimeout: Duration = .seconds(10)

    /// The default for ``init(client:sessions:concurrentCommits:maxWaitingBytes:commitTimeout:)`` (`RECEIVER_CONCURRENT_COMMITS`).
    package static let defaultConcurrentCommits = 2
    /// The default for ``init(client:sessions:concurrentCommits:maxWaitingBytes:commitTimeout:)``: 64 MiB, thousands of Apple's
    /// notifications (the receiver's store deadline answers a caller long before that many queue in normal operation).
    package static let defaultMaxWaitingBytes = 64 << 20

    /// How many of ``append(_:logger:)``'s callers wait for a transaction to take their event.
    package var waitingAppends: Int { groupCommit.waitingCount }

    /// Appends an event and its pending queue row. Returns only after the database confirmed the commit of the
    /// transaction that carried it, so a caller may acknowledge the input; throws when it did not. Concurrent
    /// appends share transactions (``GroupCommit``).
    package func append(_ event: NewEvent, logger: Logger) async throws -> AppendedEvent {
        try await groupCommit.append(event, logger: logger)
    }

    /// Appends an event and its queue row on an existing connection, inside the caller's transaction (which must
    /// commit before anything is acknowledged, and which was opened with the same `sessions`).
    package static func append(
        _ event: NewEvent, on connection: PostgresConnection, sessions: DatabaseSessions, logger: Logger
    ) async throws -> AppendedEvent {
        try await append([event], on: connection, sessions: sessions, logger: logger)[0]
    }

    /// Appends events and their queue rows in one statement on an existing connection, inside the caller's
    /// transaction; returns their ids and received times in the order of `events`.
    static func append(
        _ events: [NewEvent], on connection: PostgresConnection, sessions: DatabaseSessions, logger: Logger
    ) async throws -> [AppendedEvent] {
        let rows = try await sessions.run(AppendStatement(events: events), on: connection, logger: logger)
        guard rows.count == events.count else {
            throw StoreError(.invariantBroken, "the append of \(events.count) events returned \(rows.count) rows")
        }
        return rows.map { AppendedEvent(id: EventID($0.0), receivedAt: $0.1) }
    }

    /// Creates monthly partitions from this month through `monthsAhead` months ahead; returns how
    /// many it created. Idempotent; workers call it periodically (``EventPartitions/ensure(monthsAhead:from:logger:)``).
    @discardableResult
    package func ensurePartitions(monthsAhead: Int = 3, logger: Logger) async throws -> Int {
        try await EventPartitions(client: client).ensure(monthsAhead: monthsAhead, logger: logger)
    }
}
