import StoreLedgerCore
import Testing

@testable import StoreLedgerStore

/// The worker's cache of decoded facts: a hit only for exactly the same stored texts, and bounded.
@Suite("Processing: decoded fact cache")
struct DecodedFactCacheTests {
    /// A distinct fact per call, so a test sees which decode produced what it got.
    final class Decoder {
        var calls = 0
        func decode() -> LedgerFact {
            calls += 1
            var renewal = RenewalInfoPayload()
            renewal.originalTransactionID = OriginalTransactionID("\(calls)")
            return .renewalInfo(renewal)
        }
    }

    @Test("the same texts decode once; any other texts, however close, decode again")
    func hitsOnlyForTheSameTexts() {
        let cache = DecodedFactCache(capacity: 100)
        let decoder = Decoder()
        let first = cache.fact(kind: "notification", payload: "ab", transaction: "c", renewal: nil, decode: decoder.decode)
        let again = cache.fact(kind: "notification", payload: "ab", transaction: "c", renewal: nil, decode: decoder.decode)
        #expect(again == first)
        #expect(decoder.calls == 1)

        let neighbours: [(String, String, String?, String?)] = [
            ("notification", "a", "bc", nil),  // the same bytes split differently
            ("notification", "ab", "c", ""),  // an empty text is not an absent one
            ("notification", "ab", nil, "c"),  // the same text in another slot
            ("transaction", "ab", "c", nil),  // another kind
            ("notification", "ab ", "c", nil),
        ]
        for (index, (kind, payload, transaction, renewal)) in neighbours.enumerated() {
            let fact = cache.fact(kind: kind, payload: payload, transaction: transaction, renewal: renewal, decode: decoder.decode)
            #expect(decoder.calls == index + 2, "\(kind) \(payload) \(transaction ?? "nil") \(renewal ?? "nil")")
            #expect(fact != first)
        }
    }

    @Test("a full cache starts over instead of growing")
    func staysWithinItsCapacity() {
        let cache = DecodedFactCache(capacity: 8)
        let decoder = Decoder()
        for index in 0..<50 {
            _ = cache.fact(kind: "transaction", payload: "\(index)", transaction: nil, renewal: nil, decode: decoder.decode)
            #expect(cache.count <= 8)
        }
        #expect(decoder.calls == 50)
        _ = cache.fact(kind: "transaction", payload: "49", transaction: nil, renewal: nil, decode: decoder.decode)
        #expect(decoder.calls == 50)
    }

    @Test("a failing decode caches nothing and fails again")
    func failuresAreNotCached() {
        struct Broken: Error {}
        let cache = DecodedFactCache(capacity: 8)
        for _ in 0..<2 {
            #expect(throws: Broken.self) {
                try cache.fact(kind: "transaction", payload: "{", transaction: nil, renewal: nil) { throw Broken() }
            }
        }
        #expect(cache.count == 0)
    }
}
