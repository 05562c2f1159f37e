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

    /// A report.
    package init(
        eventsReplayed: Int, eventsRejected: Int, differences: [ShadowSchema.Difference], rowsChanged: [String: Int], swapped: Bool
    ) {
        self.eventsReplayed = eventsReplayed
        self.eventsRejected = eventsRejected
        self.differences = differences
        self.rowsChanged = rowsChanged
        self.swapped = swapped
    }

    /// Whether some table listed as many differences as are listed per table
    /// (``ShadowSchema/differencesListedPerTable``): there may be more than ``differences`` holds.
    package var differencesAreCapped: Bool {
        Dictionary(grouping: differences, by: \.table).values.contains { $0.count >= ShadowSchema.differencesListedPerTable }
    }
}
