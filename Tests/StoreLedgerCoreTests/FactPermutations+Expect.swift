import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

extension FactPermutations {
    /// Folds `iterations` random permutations-with-duplicates and expects each to equal the fold of the facts
    /// in signing order. Reports the seed that reproduces the first difference (set CORE_PROPERTY_SEED).
    static func expectOrderIndependent<State: Equatable>(
        _ facts: [LedgerFact],
        iterations: Int = 200,
        salt: UInt64,
        sourceLocation: SourceLocation = #_sourceLocation,
        fold: ([LedgerFact]) -> State?
    ) {
        let expected = fold(facts)
        #expect(expected != nil, sourceLocation: sourceLocation)
        let seed = baseSeed ^ salt
        var rng = SplitMix64(seed: seed)
        for iteration in 0..<iterations {
            let permuted = shuffledWithDuplicates(facts, using: &rng)
            let actual = fold(permuted)
            if actual != expected {
                Issue.record(
                    """
                    fold differs on permutation \(iteration): CORE_PROPERTY_SEED=\(baseSeed) (salt \(salt))
                    expected: \(String(describing: expected))
                    actual:   \(String(describing: actual))
                    """,
                    sourceLocation: sourceLocation)
                return
            }
        }
    }
}
