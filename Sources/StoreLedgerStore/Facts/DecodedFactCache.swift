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
/// Bounded, least recently used first out, approximately: two generations of at most `capacity / 2` facts each;
/// a hit in the older one moves the fact to the newer, and when the newer is full the older is dropped. It carries
/// the process's decoded subscription fold states too (``foldStates``, as many as facts).
package final class DecodedFactCache: Sendable {
    /// A fact's kind and content digest (lower-case hex).
    struct Key: Hashable, Sendable {
        /// The fact's kind (the tables hash different bytes).
        let kind: LedgerFactKind
        /// SHA-256 of the fact's verified bytes, hex.
        let digestHex: String
    }

    private struct Generations {
        var capacity: Int
        var newer: [Key: LedgerFact] = [:]
        var older: [Key: LedgerFact] = [:]
    }

    /// The default capacity: 20,000 facts (about 36 MB in a worker, measured with notification facts).
    package static let defaultCapacity = 20_000

    private let generations: Mutex<Generations>

    /// The decoded fold states of the subscriptions this process projected, at most `capacity` of them.
    package let foldStates: FoldStateCache

    /// Creates a cache holding at most `capacity` facts (and as many fold states); 0 holds none.
    package init(capacity: Int = defaultCapacity) {
        generations = Mutex(Generations(capacity: max(capacity, 0)))
        foldStates = FoldStateCache(capacity: capacity)
    }

    /// The most facts held at once.
    package internal(set) var capacity: Int {
        get { generations.withLock { $0.capacity } }
        set {
            generations.withLock { generations in
                generations.capacity = max(newValue, 0)
                if generations.newer.count + generations.older.count > generations.capacity {
                    generations.newer = [:]
                    generations.older = [:]
                }
            }
        }
    }

    /// How many facts it holds.
    var count: Int { generations.withLock { $0.newer.count + $0.older.count } }

    /// The decoded fact with this key, if remembered.
    func fact(_ key: Key) -> LedgerFact? {
        facts([key])[0]
    }

    /// The decoded facts with these keys, each `nil` if not remembered (one lock for all).
    func facts(_ keys: [Key?]) -> [LedgerFact?] {
        generations.withLock { generations in
            keys.map { key in
                guard let key else { return nil }
                if let fact = generations.newer[key] { return fact }
                guard let fact = generations.older.removeValue(forKey: key) else { return nil }
                insert(fact, for: key, into: &generations)
                return fact
            }
        }
    }

    /// Remembers decoded facts under their keys.
    func remember(_ facts: some Sequence<(key: Key, fact: LedgerFact)>) {
        generations.withLock { generations in
            for (key, fact) in facts { insert(fact, for: key, into: &generations) }
        }
    }

    private func insert(_ fact: LedgerFact, for key: Key, into generations: inout Generations) {
        guard generations.capacity > 0 else { return }
        if generations.newer.count >= (generations.capacity + 1) / 2 {
            generations.older = generations.newer
            generations.newer = [:]
        }
        generations.newer[key] = fact
    }
}
