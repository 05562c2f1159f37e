package import PostgresNIO
package import StoreLedgerCore

/// How a kind of projected row is stored: its table and key columns, its columns as written, and the columns read
/// back to classify a change for webhooks. ``SubscriptionState`` and ``PurchaseState`` conform (beside their
/// ``SubscriptionRow`` and ``PurchaseRow``), so ``ReadModelStore`` writes and reads both through one path.
package protocol StoredRow: ProjectedRow {
    /// The row as its table's columns.
    associatedtype Row: ReadModelRow

    /// The read-model table (`subscriptions`, `purchases`).
    static var table: String { get }
    /// The id column that follows `environment` in the table's primary key.
    static var idColumn: String { get }
    /// The key's values for `environment` and ``idColumn``.
    static func columns(of key: Key) -> (environment: String, id: String)
    /// The row as its table's columns.
    var readModelRow: Row { get }
    /// The select list, over the table aliased `r`, of what ``change(from:to:)`` compares; read back by
    /// ``init(changeColumns:)``.
    static var changeColumns: String { get }
    /// The stored state as far as ``changeColumns`` tell it (cells in that order), or nil when the row is absent.
    init?(changeColumns cells: ArraySlice<PostgresCell>) throws
}
