package import StoreLedgerCore

/// One column's value in a read-model row, typed so that writing the row needs no casts.
package enum ColumnValue: Sendable, Equatable {
    /// SQL NULL.
    case null
    /// A `text` column.
    case text(String)
    /// A `boolean` column.
    case bool(Bool)
    /// An integer column.
    case integer(Int64)
    /// A `timestamptz` column.
    case timestamp(Timestamp)

    /// A text value, NULL when absent.
    package init(_ value: String?) { self = value.map { .text($0) } ?? .null }
    /// A Boolean value, NULL when absent.
    package init(_ value: Bool?) { self = value.map { .bool($0) } ?? .null }
    /// An integer value, NULL when absent.
    package init(_ value: (some BinaryInteger)?) { self = value.map { .integer(Int64($0)) } ?? .null }
    /// An instant, NULL when absent.
    package init(_ value: Timestamp?) { self = value.map { .timestamp($0) } ?? .null }

    /// Writes the value as JSON that `jsonb_populate_record` reads into its column: a timestamp as ISO 8601 UTC text.
    package func write(to out: inout JSONTextWriter) {
        switch self {
        case .null: out.null()
        case .text(let value): out.string(value)
        case .bool(let value): out.bool(value)
        case .integer(let value): out.integer(value)
        case .timestamp(let value): out.isoTimestamp(value)
        }
    }
}
