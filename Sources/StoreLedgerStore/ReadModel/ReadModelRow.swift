import StoreLedgerCore

/// A read-model row: its table's columns and its values in the same order.
package protocol ReadModelRow {
    /// The table's columns this row sets, in a fixed order (`updated_at` is the database's).
    static var columns: [String] { get }
    /// The values, in ``columns`` order.
    var values: [ColumnValue] { get }
}

extension ReadModelRow {
    /// Writes the row as a JSON object whose keys are its columns (NULLs included, so an absent value clears the
    /// column), keys in column order; a row whose values do not match its columns is an error.
    func write(to out: inout JSONTextWriter) throws {
        let values = self.values
        guard values.count == Self.columns.count else {
            throw StoreError(.invariantBroken, "a \(Self.self) has \(values.count) values for \(Self.columns.count) columns")
        }
        out.object { out in
            for (column, value) in zip(Self.columns, values) {
                out.key(string: column)
                value.write(to: &out)
            }
        }
    }
}
