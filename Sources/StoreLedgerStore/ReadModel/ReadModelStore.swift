public import Foundation
public import Logging
public import PostgresNIO
public import StoreLedgerCore

/// Writes the read model (`subscriptions`, `purchases`) from projected states, on the caller's
/// connection. A row's `updated_at` moves only when one of its values changes.
public enum ReadModelStore {
    /// Takes the transaction-scoped lock that serialises projections of one row, so two workers
    /// folding the same subscription cannot each miss the other's new fact.
    public static func lock(_ rowKey: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(hashtextextended(\(rowKey), 0))", logger: logger)
    }

    /// Writes (or, when `state` is nil, deletes) the subscription row for `key`.
    public static func write(_ state: SubscriptionState?, for key: SubscriptionKey, on connection: PostgresConnection, logger: Logger) async throws {
        try await write(
            state.map(SubscriptionRow.init), table: "subscriptions",
            key: [("environment", key.environment.rawValue), ("original_transaction_id", key.originalTransactionID.rawValue)],
            on: connection, logger: logger
        )
    }

    /// Writes (or, when `state` is nil, deletes) the purchase row for `key`.
    public static func write(_ state: PurchaseState?, for key: PurchaseKey, on connection: PostgresConnection, logger: Logger) async throws {
        try await write(
            state.map(PurchaseRow.init), table: "purchases",
            key: [("environment", key.environment.rawValue), ("transaction_id", key.transactionID.rawValue)],
            on: connection, logger: logger
        )
    }

    /// Upserts `row`, or deletes the row at `key` when there is none.
    private static func write(
        _ row: (some ReadModelRow)?, table: String, key: [(column: String, value: String)],
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        guard let row else {
            var query = PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE \(key.enumerated().map { "\($1.column) = $\($0 + 1)" }.joined(separator: " AND "))")
            for part in key { query.binds.append(part.value, context: .default) }
            try await connection.query(query, logger: logger)
            return
        }
        try await upsert(table: table, keyColumns: key.map(\.column), row: row, on: connection, logger: logger)
    }

    /// Upserts `row` (a JSON object keyed by column name) with `jsonb_populate_record`.
    private static func upsert(
        table: String, keyColumns: [String], row: some ReadModelRow, on connection: PostgresConnection, logger: Logger
    ) async throws {
        let columns = type(of: row).columns
        let valueColumns = columns.filter { !keyColumns.contains($0) }
        let list = columns.joined(separator: ", ")
        let sql = """
            INSERT INTO \(table) AS t (\(list))
            SELECT \(list) FROM jsonb_populate_record(NULL::\(table), $1::jsonb)
            ON CONFLICT (\(keyColumns.joined(separator: ", "))) DO UPDATE
            SET \(valueColumns.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")), updated_at = now()
            WHERE (\(valueColumns.map { "t.\($0)" }.joined(separator: ", "))) IS DISTINCT FROM (\(valueColumns.map { "excluded.\($0)" }.joined(separator: ", ")))
            """
        var query = PostgresQuery(unsafeSQL: sql)
        query.binds.append(try row.json(), context: .default)
        try await connection.query(query, logger: logger)
    }
}

/// A read-model row as a JSON object whose keys are its table's columns.
protocol ReadModelRow {
    /// The table's columns this row sets, in a fixed order (`updated_at` is the database's).
    static var columns: [String] { get }
    /// The values by column; nil is SQL NULL.
    var values: [String: Any?] { get }
}

extension ReadModelRow {
    /// The row as a JSON object (NULLs included, so an absent value clears the column).
    func json() throws -> String {
        var object: [String: Any] = [:]
        for column in Self.columns { object[column] = (values[column] ?? nil) ?? NSNull() }
        return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}

/// ISO 8601 with milliseconds, which `jsonb_populate_record` reads as `timestamptz`.
func isoTimestamp(_ timestamp: Timestamp?) -> Any? {
    guard let timestamp else { return nil }
    return Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(timestamp.date)
}
