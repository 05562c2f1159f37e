import StoreLedgerCore
import Testing

@testable import StoreLedgerStore

/// The worker's cache of decoded facts: found only under the kind and digest it was remembered with, and bounded.
@Suite("Processing: decoded fact cache")
struct DecodedFactCacheTests {
    /// A renewal info fact told apart by its original transaction id.
    func fact(_ id: String) -> LedgerFact {
        var renewal = RenewalInfoPayload()
        renewal.originalTransactionID = OriginalTransactionID(id)
        return .renewalInfo(renewal)
    }

    /// A 64-digit hex digest from a short tag.
    func digest(_ tag: String) -> String {
        String(repeating: "0", count: 64 - tag.count) + tag
    }

    @Test("a fact is found under its kind and digest, and under nothing else")
    func foundOnlyUnderItsKey() {
        let cache = DecodedFactCache(capacity: 100)
        let key = DecodedFactCache.Key(kind: .renewalInfo, digestHex: digest("a1"))
        cache.remember([(key, fact("1"))])
        #expect(cache.fact(key) == fact("1"))
        #expect(cache.fact(.init(kind: .transaction, digestHex: digest("a1"))) == nil)
        #expect(cache.fact(.init(kind: .renewalInfo, digestHex: digest("a2"))) == nil)
    }

    @Test("it never holds more than its capacity, and the oldest facts go first")
    func staysWithinItsCapacity() {
        let cache = DecodedFactCache(capacity: 8)
        for index in 0..<50 {
            cache.remember([(.init(kind: .transaction, digestHex: digest(String(index, radix: 16))), fact("\(index)"))])
            #expect(cache.count <= 8)
        }
        #expect(cache.fact(.init(kind: .transaction, digestHex: digest(String(49, radix: 16)))) == fact("49"))
        #expect(cache.fact(.init(kind: .transaction, digestHex: digest("0"))) == nil)
    }

    @Test("a fact in use stays while others come and go")
    func recentlyUsedFactsStay() {
        let cache = DecodedFactCache(capacity: 4)
        let kept = DecodedFactCache.Key(kind: .notification, digestHex: digest("ee"))
        cache.remember([(kept, fact("kept"))])
        for index in 0..<20 {
            cache.remember([(.init(kind: .transaction, digestHex: digest(String(index, radix: 16))), fact("\(index)"))])
            #expect(cache.fact(kept) == fact("kept"), "after \(index + 1) others")
            #expect(cache.count <= 4)
        }
    }

    @Test("capacity 0 keeps nothing; lowering the capacity below what it holds empties it")
    func capacityCanBeChanged() {
        let cache = DecodedFactCache(capacity: 0)
        let key = DecodedFactCache.Key(kind: .transaction, digestHex: digest("1"))
        cache.remember([(key, fact("1"))])
        #expect(cache.fact(key) == nil)
        cache.capacity = 10
        cache.remember((0..<6).map { (.init(kind: .transaction, digestHex: digest(String($0))), fact("\($0)")) })
        #expect(cache.count == 6)
        cache.capacity = 4
        #expect(cache.count == 0)
        cache.remember([(key, fact("1"))])
        #expect(cache.fact(key) == fact("1"))
    }
}
