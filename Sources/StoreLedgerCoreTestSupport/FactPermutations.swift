import Foundation
package import StoreLedgerCore
package import StoreLedgerSimulation

/// Property-test helpers: shuffle and duplicate facts with a seeded generator (the check that a fold does not care,
/// `expectOrderIndependent`, lives in StoreLedgerCoreTests, where it can record issues).
package enum FactPermutations {
    /// The base seed: `CORE_PROPERTY_SEED` from the environment to replay a failure, otherwise random.
    package static let baseSeed: UInt64 = {
        if let text = ProcessInfo.processInfo.environment["CORE_PROPERTY_SEED"], let seed = UInt64(text) {
            return seed
        }
        return UInt64.random(in: 0...UInt64.max)
    }()

    /// A random permutation of the facts in which a random subset appears two or three times.
    package static func shuffledWithDuplicates(_ facts: [LedgerFact], using rng: inout SplitMix64) -> [LedgerFact] {
        var result = facts
        for fact in facts where Int.random(in: 0..<3, using: &rng) == 0 {
            for _ in 0..<Int.random(in: 1...2, using: &rng) { result.append(fact) }
        }
        result.shuffle(using: &rng)
        return result
    }
}
