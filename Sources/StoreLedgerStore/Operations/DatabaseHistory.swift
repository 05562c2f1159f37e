package import Foundation
package import Logging
package import PostgresNIO

/// The database histories StoreLedger has written into (`database_history`, migration 0011): a failover to a
/// standby or a restore from backup starts a new one, and the events acknowledged on the old one after the new one
/// branched off may be lost. Noticing it moves the event id sequence on (so no id names two bodies) and leaves a
/// window to reconcile from Apple's notification history.
package struct DatabaseHistory: Sendable {
    /// A change of history that was noticed: what the database still had, and the window that may have lost events.
    package struct Change: Sendable, Equatable {
        /// The row's id.
        package var id: Int64
        /// When it was noticed.
        package var noticedAt: Date
        /// The history before: system identifier and timeline.
        package var previous: (systemIdentifier: String, timeline: Int)
        /// The history now.
        package var current: (systemIdentifier: String, timeline: Int)
        /// The newest event the database still had when the change was noticed.
        package var lastEventID: Int64?
        /// When that event was received (nil for an empty log).
        package var lastReceivedAt: Date?
        /// Event ids continue from at least this.
        package var eventIDFloor: Int64
        /// When the window was reconciled, if it was.
        package var reconciledAt: Date?

        /// The window whose notifications may be lost: from `margin` before the newest event still present (an empty
        /// log: `margin` before the change was noticed) to `margin` after it was noticed. Reconciling it is idempotent.
        package func window(margin: TimeInterval = 600) -> (start: Date, end: Date) {
            ((lastReceivedAt ?? noticedAt).addingTimeInterval(-margin), noticedAt.addingTimeInterval(margin))
        }

        /// Compares every field.
        package static func == (lhs: Change, rhs: Change) -> Bool {
            lhs.id == rhs.id && lhs.noticedAt == rhs.noticedAt && lhs.previous == rhs.previous && lhs.current == rhs.current
                && lhs.lastEventID == rhs.lastEventID && lhs.lastReceivedAt == rhs.lastReceivedAt && lhs.eventIDFloor == rhs.eventIDFloor
                && lhs.reconciledAt == rhs.reconciledAt
        }
    }

    /// The database.
    package let client: PostgresClient

    /// Creates the helper.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Looks at the history now (appends also do, on a session's first insert); returns whether it changed since last
    /// seen, in which case the id sequence has been moved on and the change recorded.
    @discardableResult
    package func check(logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("SELECT storeledger_check_history()", logger: logger).decode(Bool.self).firstAfterReadingAll() ?? false
        }
    }

    /// Compares the log's high-water mark (the largest committed event id, or a recorded change's id floor) with `seen`, the highest this process saw: a
    /// mark lower than that means the database was put back in place (a snapshot restored, which keeps the system
    /// identifier and timeline ``check(logger:)`` compares), and it is recorded as a change of history (the id
    /// sequence moved on, a window to reconcile). Returns whether it was, and the mark now, to remember for next time.
    package func checkRewind(seen: Int64, logger: Logger) async throws -> (rewound: Bool, highWater: Int64) {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("SELECT rewound, high_water FROM storeledger_check_rewind(\(seen))", logger: logger)
                .decode((Bool, Int64).self).firstAfterReadingAll() ?? (false, seen)
        }
    }

    /// Every noticed change (oldest first); only those not yet reconciled with `unreconciledOnly`.
    package func changes(unreconciledOnly: Bool = false, logger: Logger) async throws -> [Change] {
        let rows = try await client.rows(
            """
            SELECT id, noticed_at, previous_system_identifier, previous_timeline, system_identifier, timeline,
                   last_event_id, last_received_at, event_id_floor, reconciled_at
            FROM database_history
            WHERE previous_system_identifier IS NOT NULL AND (NOT \(unreconciledOnly) OR reconciled_at IS NULL)
            ORDER BY id
            """,
            logger: logger
        ).decode((Int64, Date, String, Int32, String, Int32, Int64?, Date?, Int64, Date?).self)
        return rows.map { id, noticedAt, previousSystem, previousTimeline, system, timeline, lastEventID, lastReceivedAt, floor, reconciledAt in
            Change(
                id: id, noticedAt: noticedAt, previous: (previousSystem, Int(previousTimeline)), current: (system, Int(timeline)),
                lastEventID: lastEventID, lastReceivedAt: lastReceivedAt, eventIDFloor: floor, reconciledAt: reconciledAt
            )
        }
    }

    /// Records that change `id`'s window was reconciled by `by` (or, with `error`, that an attempt failed and will be
    /// retried); a `note` (what could not be reconciled) is kept in `last_reconcile_error` beside `reconciled_at`.
    package func markReconciled(_ id: Int64, by: String, error: String? = nil, note: String? = nil, logger: Logger) async throws {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                UPDATE database_history
                SET reconciled_at = CASE WHEN \(error)::text IS NULL THEN now() END,
                    reconciled_by = CASE WHEN \(error)::text IS NULL THEN \(by) END,
                    last_reconcile_error = coalesce(\(error)::text, \(note)::text)
                WHERE id = \(id)
                """,
                logger: logger
            ).readToEnd()
        }
    }
}
