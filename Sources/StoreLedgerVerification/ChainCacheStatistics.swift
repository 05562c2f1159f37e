/// Counters of a verifier's chain cache, for metrics and tests.
package struct ChainCacheStatistics: Hashable, Sendable {
    /// JWS whose (leaf, intermediate) pair was found valid for its `signedDate` without rebuilding the chain.
    package var hits: Int
    /// Full chain validations run (cache misses, whether they succeeded or not).
    package var chainValidations: Int
    /// Pairs currently remembered.
    package var entries: Int
    /// The most pairs remembered at once.
    package var capacity: Int

    /// Creates a statistics value.
    package init(hits: Int = 0, chainValidations: Int = 0, entries: Int = 0, capacity: Int) {
        self.hits = hits
        self.chainValidations = chainValidations
        self.entries = entries
        self.capacity = capacity
    }
}
