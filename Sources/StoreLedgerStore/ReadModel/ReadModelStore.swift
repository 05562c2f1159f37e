import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Writes the read model (`subscriptions`, `purchases`) from projected states, on the caller's
/// connection. A row's `updated_at` moves only when one of its values changes.
package enum ReadModelStore {
    /// Takes the locks of many rows in one statement, in the order given (callers sort, so that two workers
    /// locking overlapping sets cannot deadlock).
    package static func lock(_ rowKeys: [String], on connection: PostgresConnection, logger: Logger) async throws {
        guard !rowKeys.isEmpty else { return }
        // A volatile function in the target list is evaluated after the ORDER BY: locks are taken in order (the plan
        // is one scan of the array WITH ORDINALITY, already in that order, calling the function row by row). Counting
        // the locks sends one row back instead of one per key; it is read, so an error after the locks cannot go unseen.
        try await connection.query(
            """
            SELECT count(*) FROM (
                SELECT pg_advisory_xact_lock(hashtextextended(k, 0))
                FROM unnest(\(rowKeys)::text[]) WITH ORDINALITY AS t(k, i) ORDER BY i
            ) AS locked
            """,
            logger: logger
        ).readToEnd()
    }

    /// Takes those of `lockKeys` that no other transaction holds, without waiting, and returns them: for a caller that
    /// already holds other rows' locks, for which waiting could close a cycle with a projection taking them in order.
    package static func tryLock(_ lockKeys: [String], on connection: PostgresConnection, logger: Logger) async throws -> Set<String> {
        guard !lockKeys.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT k FROM unnest(\(lockKeys)::text[]) WITH ORDINALITY AS t(k, i)
            WHERE pg_try_advisory_xact_lock(hashtextextended(k, 0))
            ORDER BY i
            """,
            logger: logger
        )
        return Set(try await rows.decode(String.self).readToEnd())
    }

    /// The lock key of the row `key` names (`subscription/…`, `purchase/…`): what ``lock(_:on:logger:)`` takes for it.
    package static func lockKey<Row: ProjectedRow>(_ key: Row.Key, of _: Row.Type) -> String { "\(Row.kind)/\(key)" }

    /// The lock key of the row `transaction` belongs to, nil when it names none.
    package static func lockKey(of transaction: TransactionPayload) -> String? {
        if let key = transaction.subscriptionKey { return lockKey(key, of: SubscriptionState.self) }
        if let key = transaction.purchaseKey { return lockKey(key, of: PurchaseState.self) }
        return nil
    }

    /// The lock of a one-time purchase (all its rows: a restore on another device is a row of its own), named by the
    /// environment and original transaction id its rows share, as `entitlements_at` groups them. Taken after rows' locks.
    package static func purchaseLockKey(environment: String, originalTransactionID: String) -> String {
        "purchase-family/\(environment)/\(originalTransactionID)"
    }

    /// The purchase lock of `transaction`'s row, nil when it is a subscription's (a subscription is one row).
    package static func purchaseLockKey(of transaction: TransactionPayload) -> String? {
        guard let key = transaction.purchaseKey else { return nil }
        return purchaseLockKey(
            environment: key.environment.rawValue, originalTransactionID: transaction.originalTransactionID?.rawValue ?? key.transactionID.rawValue)
    }

    /// Writes many rows of one kind: upserts the projected states in one statement and deletes, in one more, the rows
    /// whose state is nil (facts that no longer make a row).
    package static func write<State: StoredRow>(_ states: [State.Key: State?], on connection: PostgresConnection, logger: Logger) async throws {
        var rows: [State.Row] = []
        var gone: [State.Key] = []
        for (key, state) in states {
            if let state { rows.append(state.readModelRow) } else { gone.append(key) }
        }
        if !gone.isEmpty {
            try await connection.query(
                """
                DELETE FROM \(unescaped: State.table)
                WHERE (environment, \(unescaped: State.idColumn)) IN (
                    SELECT * FROM unnest(\(gone.map { State.columns(of: $0).environment })::text[], \(gone.map { State.columns(of: $0).id })::text[]))
                """,
                logger: logger
            )
        }
        try await upsert(table: State.table, keyColumns: ["environment", State.idColumn], rows: rows, on: connection, logger: logger)
    }

    /// Upserts `rows` (one JSON array of objects keyed by column name) with `jsonb_populate_recordset`, in one statement; a
    /// row's `updated_at` moves only when one of its values changes.
    private static func upsert<Row: ReadModelRow>(
        table: String, keyColumns: [String], rows: [Row], on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard !rows.isEmpty else { return }
        let columns = Row.columns
        let valueColumns = columns.filter { !keyColumns.contains($0) }
        let list = columns.joined(separator: ", ")
        let set = valueColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        let old = valueColumns.map { "t.\($0)" }.joined(separator: ", ")
        let new = valueColumns.map { "excluded.\($0)" }.joined(separator: ", ")
        var out = JSONTextWriter(capacity: 1024 * rows.count)
        try out.array { out in
            for row in rows {
                out.element()
                try row.write(to: &out)
            }
        }
        let json = out.text
        try await connection.query(
            """
            INSERT INTO \(unescaped: table) AS t (\(unescaped: list))
            SELECT \(unescaped: list) FROM jsonb_populate_recordset(NULL::\(unescaped: table), \(json)::jsonb)
            ON CONFLICT (\(unescaped: keyColumns.joined(separator: ", "))) DO UPDATE
            SET \(unescaped: set), updated_at = now()
            WHERE (\(unescaped: old)) IS DISTINCT FROM (\(unescaped: new))
            """,
            logger: logger
        )
    }
}
