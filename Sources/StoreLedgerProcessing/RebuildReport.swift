package import StoreLedgerStore

/// What a rebuild found and did.
package struct RebuildReport: Sendable {
    /// Events replayed (all phases).
    package var eventsReplayed: Int
    /// Events the replay could not verify (they add no facts, as in the live ledger).
    package var eventsRejected: Int
    /// Rows that differ(ed) between the live tables and the rebuild, per table (up to a limit per table).
    package var differences: [ShadowSchema.Difference]
    /// Rows written per table by the swap (empty for a dry run).
    package var rowsChanged: [String: Int]
    /// Whether the live tables were replaced.
    package var swapped: Bool
}
