package import StoreLedgerCore
import Synchronization

/// Decoded fold states by subscription, each under the SHA-256 of the stored text it was written as or read from,
/// shared by a process's claim loops (it is part of the process's ``DecodedFactCache``, and sized like it).
///
/// Reading a state back before merging into it meant decoding its JSON every time: with the encoding, a fifth of
/// a worker's CPU. ``FoldStateStore`` sends the digest of the state it holds for each key and gets the stored text
/// back only when the stored digest differs (another process wrote the row since, a rebuild swapped it, a
/// transaction that wrote it rolled back), so a hit is the state stored, whoever wrote it: a digest names one text.
///
/// Bounded, least recently used first out, approximately: two generations of at most `capacity / 2` states each.
package final class FoldStateCache: Sendable {
    /// A state and the digest (lower-case hex) of its stored text.
    package struct Entry: Sendable {
        /// SHA-256 of the stored text, hex.
        package var digestHex: String
        /// The decoded state.
        package var state: SubscriptionFoldState
    }

    private struct Generations {
        var capacity: Int
        var newer: [SubscriptionKey: Entry] = [:]
        var older: [SubscriptionKey: Entry] = [:]
    }

    private let generations: Mutex<Generations>

    /// Creates a cache holding at most `capacity` states; 0 holds none.
    package init(capacity: Int) {
        generations = Mutex(Generations(capacity: max(capacity, 0)))
    }

    /// How many states it holds.
    package var count: Int { generations.withLock { $0.newer.count + $0.older.count } }

    /// The entries held for `keys` (one lock for all).
    func entries(_ keys: [SubscriptionKey]) -> [SubscriptionKey: Entry] {
        generations.withLock { generations in
            var found: [SubscriptionKey: Entry] = [:]
            for key in keys {
                if let entry = generations.newer[key] {
                    found[key] = entry
                } else if let entry = generations.older.removeValue(forKey: key) {
                    found[key] = entry
                    Self.insert(entry, for: key, into: &generations)
                }
            }
            return found
        }
    }

    /// Remembers states under their keys, replacing what was held.
    func remember(_ entries: some Sequence<(key: SubscriptionKey, entry: Entry)>) {
        generations.withLock { generations in
            for (key, entry) in entries { Self.insert(entry, for: key, into: &generations) }
        }
    }

    /// Forgets the states of `keys` (their stored states were removed).
    func forget(_ keys: some Sequence<SubscriptionKey>) {
        generations.withLock { generations in
            for key in keys {
                generations.newer.removeValue(forKey: key)
                generations.older.removeValue(forKey: key)
            }
        }
    }

    private static func insert(_ entry: Entry, for key: SubscriptionKey, into generations: inout Generations) {
        guard generations.capacity > 0 else { return }
        generations.older.removeValue(forKey: key)
        if generations.newer[key] == nil, generations.newer.count >= (generations.capacity + 1) / 2 {
            generations.older = generations.newer
            generations.newer = [:]
        }
        generations.newer[key] = entry
    }
}
