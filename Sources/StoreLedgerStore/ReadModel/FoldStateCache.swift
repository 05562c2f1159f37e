package import Foundation
package import StoreLedgerCore
import Synchronization

/// Decoded fold states by subscription, each under the version stored beside it (`state_version`: made once per
/// write), shared by a process's claim loops (it is part of the process's ``DecodedFactCache``, and sized like it).
///
/// Reading a state back before merging into it meant decoding its JSON every time: with the encoding, a fifth of
/// a worker's CPU. ``FoldStateStore`` sends the version of the state it holds for each key and gets the stored text
/// back only when the stored version differs (another process wrote the row since, a rebuild swapped it, a
/// transaction that wrote it rolled back), so a hit is the state stored: a version names one write.
///
/// Bounded, least recently used first out, approximately (``TwoGenerationCache``).
package final class FoldStateCache: Sendable {
    /// A state and the version it is stored under; immutable, and a reference, so that handing one in and out of the
    /// cache retains one object rather than every string of the state.
    package final class Entry: Sendable {
        /// The version stored beside the state.
        package let version: UUID
        /// The decoded state.
        package let state: SubscriptionFoldState

        /// An entry for `state`, stored under `version`.
        package init(version: UUID, state: SubscriptionFoldState) {
            self.version = version
            self.state = state
        }
    }

    /// A version no write makes: sent for a key whose state is not held (it matches no stored version).
    package static let noVersion = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// This process's half of every version it makes: random, drawn once.
    private static let processPrefix = UInt64.random(in: 0...UInt64.max)
    /// The other half: writes made so far by this process.
    private static let writes = Atomic<UInt64>(0)

    /// A version no other write makes: this process's random 64 bits and the number of its writes so far (from 1, so
    /// never ``noVersion``). Two processes share a prefix with probability 2⁻⁶⁴; no system call per write, unlike a
    /// random UUID.
    package static func newVersion() -> UUID {
        var uuid = noVersion.uuid
        withUnsafeMutableBytes(of: &uuid) { bytes in
            bytes.storeBytes(of: processPrefix.bigEndian, as: UInt64.self)
            bytes.storeBytes(of: writes.add(1, ordering: .relaxed).newValue.bigEndian, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: uuid)
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
