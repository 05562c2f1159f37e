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
        // A volatile function in the target list is evaluated after the ORDER BY: locks are taken in order.
        try await connection.query(
            """
            SELECT pg_advisory_xact_lock(hashtextextended(k, 0))
            FROM unnest(\(rowKeys)::text[]) WITH ORDINALITY AS t(k, i) ORDER BY i
            """,
            logger: logger
        )
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

    /// Upserts `rows` (JSON objects keyed by column name) with `jsonb_populate_recordset`, in one statement; a
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
        let json = "[" + (try rows.map { try $0.json() }).joined(separator: ",") + "]"
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

/// A read-model row as a JSON object whose keys are its table's columns.
package protocol ReadModelRow {
    /// The table's columns this row sets, in a fixed order (`updated_at` is the database's).
    static var columns: [String] { get }
    /// The values by column; nil is SQL NULL.
    var values: [String: Any?] { get }
}

extension ReadModelRow {
    /// The row as a JSON object (NULLs included, so an absent value clears the column), keys in column order.
    ///
    /// Written directly: the values are flat scalars, and Foundation's `JSONSerialization` took a quarter of the
    /// worker's time in the projection benchmark.
    func json() throws -> String {
        var out = "{"
        out.reserveCapacity(1024)
        for (index, column) in Self.columns.enumerated() {
            if index > 0 { out += "," }
            appendJSONString(column, to: &out)
            out += ":"
            switch values[column] ?? nil {
            case nil: out += "null"
            case let value as String: appendJSONString(value, to: &out)
            case let value as Bool: out += value ? "true" : "false"
            case let value as any BinaryInteger: out += String(describing: value)
            case let value as Double where value.isFinite: out += String(describing: value)
            case let value?:
                throw StoreError(.invariantBroken, "read model column \(column): cannot write \(type(of: value)) as JSON")
            }
        }
        out += "}"
        return out
    }
}

/// Appends `text` as a JSON string literal (RFC 8259 §7: quote, backslash and control characters escaped).
func appendJSONString(_ text: String, to out: inout String) {
    out += "\""
    // Almost every value needs no escape: then it is appended whole, not scalar by scalar.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
        out += text
        out += "\""
        return
    }
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    out += "\""
}

/// ISO 8601 UTC with milliseconds (`2026-11-22T08:30:00.123Z`), which `jsonb_populate_record` reads as
/// `timestamptz`. Formatted from the epoch milliseconds with the proleptic Gregorian calendar: the ICU-backed
/// format style cost more than the rest of the row.
func isoTimestamp(_ timestamp: Timestamp?) -> Any? {
    guard let timestamp else { return nil }
    let milliseconds = Int64((timestamp.date.timeIntervalSince1970 * 1000).rounded())
    let (days, millisecondOfDay) = milliseconds.quotientAndRemainder(dividingBy: 86_400_000)
    let (day, msOfDay) = millisecondOfDay < 0 ? (days - 1, millisecondOfDay + 86_400_000) : (days, millisecondOfDay)
    // Days since 1970-01-01 to a civil date (Howard Hinnant's days_from_civil, inverted).
    let z = day + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthPrime = (5 * dayOfYear + 2) / 153
    let dayOfMonth = dayOfYear - (153 * monthPrime + 2) / 5 + 1
    let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
    let hour = msOfDay / 3_600_000
    let minute = msOfDay / 60_000 % 60
    let second = msOfDay / 1000 % 60
    let ms = msOfDay % 1000
    return "\(pad(year, 4))-\(pad(month, 2))-\(pad(dayOfMonth, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)).\(pad(ms, 3))Z"
}
