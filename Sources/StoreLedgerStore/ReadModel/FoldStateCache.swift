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
/// Bounded, least recently used first out, approximately (``TwoGenerationCache``).
package final class FoldStateCache: Sendable {
    /// A state and the digest (lower-case hex) of its stored text; immutable, and a reference, so that handing one
    /// in and out of the cache retains one object rather than every string of the state.
    package final class Entry: Sendable {
        /// SHA-256 of the stored text, hex.
        package let digestHex: String
        /// The decoded state.
        package let state: SubscriptionFoldState

        /// An entry for `state`, stored as the text whose digest is `digestHex`.
        package init(digestHex: String, state: SubscriptionFoldState) {
            self.digestHex = digestHex
            self.state = state
        }
    }

    private let states: Mutex<TwoGenerationCache<SubscriptionKey, Entry>>

    /// Creates a cache holding at most `capacity` states; 0 holds none.
    package init(capacity: Int) {
        states = Mutex(TwoGenerationCache(capacity: capacity))
    }

    /// How many states it holds.
    package var count: Int { states.withLock { $0.count } }

    /// The entries held for `keys` (one lock for all).
    func entries(_ keys: [SubscriptionKey]) -> [SubscriptionKey: Entry] {
        states.withLock { cache in
            var found: [SubscriptionKey: Entry] = [:]
            for key in keys { found[key] = cache.value(for: key) }
            return found
        }
    }

    /// Remembers states under their keys, replacing what was held.
    func remember(_ entries: some Sequence<(key: SubscriptionKey, entry: Entry)>) {
        states.withLock { cache in
            for (key, entry) in entries { cache.insert(entry, for: key) }
        }
    }

    /// Forgets the states of `keys` (their stored states were removed).
    func forget(_ keys: some Sequence<SubscriptionKey>) {
        states.withLock { cache in
            for key in keys { cache.remove(key) }
        }
    }
}
