import StoreLedgerCore
import Synchronization

/// Decoded facts by kind and content digest (the SHA-256 of the verified bytes, as stored beside each fact), shared
/// by a process's claim loops: the process makes one, sized by `FACT_CACHE_SIZE`, and hands it to its
/// `LedgerHandler`s, which pass it to ``FactStore``.
///
/// Refolding a row reads all of its facts again whenever a new one arrives. Fetching their JSON and decoding it
/// again was a fifth of a worker's time when a subscription's notifications come close together (a burst, Apple's
/// retries, an app syncing what Apple just sent), and facts the worker had just verified were decoded twice.
/// Recording a batch remembers its decoded facts here, and a refold fetches and decodes only the facts it does not
/// find. A digest names one content, so a hit can never be another fact.
///
/// Bounded, least recently used first out, approximately (``TwoGenerationCache``). It carries the process's decoded
/// subscription fold states too (``foldStates``, as many as facts).
package final class DecodedFactCache: Sendable {
    /// A fact's kind and content digest (lower-case hex).
    struct Key: Hashable, Sendable {
        /// The fact's kind (the tables hash different bytes).
        let kind: LedgerFactKind
        /// SHA-256 of the fact's verified bytes, hex.
        let digestHex: String
    }

    /// The default capacity: 20,000 facts (about 36 MB in a worker, measured with notification facts).
    package static let defaultCapacity = 20_000

    private let held: Mutex<TwoGenerationCache<Key, LedgerFact>>

    /// The decoded fold states of the subscriptions this process projected, at most `capacity` of them.
    package let foldStates: FoldStateCache

    /// Creates a cache holding at most `capacity` facts (and as many fold states); 0 holds none.
    package init(capacity: Int = defaultCapacity) {
        held = Mutex(TwoGenerationCache(capacity: capacity))
        foldStates = FoldStateCache(capacity: capacity)
    }

    /// The most facts held at once.
    package internal(set) var capacity: Int {
        get { held.withLock { $0.capacity } }
        set { held.withLock { $0.resize(to: newValue) } }
    }

    /// How many facts it holds.
    var count: Int { held.withLock { $0.count } }

    /// The decoded fact with this key, if remembered.
    func fact(_ key: Key) -> LedgerFact? {
        facts([key])[0]
    }

    /// The decoded facts with these keys, each `nil` if not remembered (one lock for all).
    func facts(_ keys: [Key?]) -> [LedgerFact?] {
        held.withLock { cache in keys.map { key in key.flatMap { cache.value(for: $0) } } }
    }

    /// Remembers decoded facts under their keys.
    func remember(_ facts: some Sequence<(key: Key, fact: LedgerFact)>) {
        held.withLock { cache in
            for (key, fact) in facts { cache.insert(fact, for: key) }
        }
    }
}
