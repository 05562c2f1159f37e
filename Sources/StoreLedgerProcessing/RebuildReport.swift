public import StoreLedgerStore

/// What a rebuild found and did.
public struct RebuildReport: Sendable {
    /// Events replayed (all phases).
    public var eventsReplayed: Int
    /// Events the replay could not verify (they add no facts, as in the live ledger).
    public var eventsRejected: Int
    /// Rows that differ(ed) between the live tables and the rebuild, per table (up to a limit per table).
    public var differences: [ShadowSchema.Difference]
    /// Rows written per table by the swap (empty for a dry run).
    public var rowsChanged: [String: Int]
    /// Whether the live tables were replaced.
    public var swapped: Bool
}
