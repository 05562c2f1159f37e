import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerTestSupport
import Testing

/// Property-test helpers: shuffle and duplicate facts with a seeded generator, and check a fold does not care.
enum FactPermutations {
    /// The base seed: `CORE_PROPERTY_SEED` from the environment to replay a failure, otherwise random.
    static let baseSeed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["CORE_PROPERTY_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 0...UInt64.max)
    }()

    /// A random permutation of the facts in which a random subset appears two or three times.
    static func shuffledWithDuplicates(_ facts: [LedgerFact], using rng: inout SplitMix64) -> [LedgerFact] {
        var result = facts
        for fact in facts where Int.random(in: 0..<3, using: &rng) == 0 {
            for _ in 0..<Int.random(in: 1...2, using: &rng) { result.append(fact) }
        }
        result.shuffle(using: &rng)
        return result
    }

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
