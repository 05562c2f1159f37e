/// Counters of a verifier's chain cache, for metrics and tests.
public struct ChainCacheStatistics: Hashable, Sendable {
    /// JWS whose (leaf, intermediate) pair was found valid for its `signedDate` without rebuilding the chain.
    public var hits: Int
    /// Full chain validations run (cache misses, whether they succeeded or not).
    public var chainValidations: Int
    /// Pairs currently remembered.
    public var entries: Int
    /// The most pairs remembered at once.
    public var capacity: Int

    /// Creates a statistics value.
    public init(hits: Int = 0, chainValidations: Int = 0, entries: Int = 0, capacity: Int) {
        self.hits = hits
        self.chainValidations = chainValidations
        self.entries = entries
        self.capacity = capacity
    }
}
