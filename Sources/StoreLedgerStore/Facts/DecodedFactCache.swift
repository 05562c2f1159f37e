import Crypto
import Foundation
import StoreLedgerCore
import Synchronization

/// Decoded facts by the SHA-256 of their stored JSON, shared by a process's claim loops.
///
/// Refolding a row reads all of its facts again whenever a new one arrives; decoding that JSON again was a
/// quarter of a worker's time when a subscription's notifications come close together (a burst, Apple's retries,
/// an app syncing what Apple just sent). The same stored text always decodes to the same fact, so a decoded fact
/// is reused when its text comes back; the key is a cryptographic digest of every text, so a hit is never
/// another fact. Bounded: when it holds `capacity` facts it starts over.
final class DecodedFactCache: Sendable {
    /// The process-wide cache (10,000 facts: a few tens of megabytes at most).
    static let shared = DecodedFactCache(capacity: 10_000)

    /// The most facts held at once.
    let capacity: Int
    private let entries = Mutex<[SHA256.Digest: LedgerFact]>([:])

    /// Creates a cache holding at most `capacity` facts.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many facts it holds.
    var count: Int { entries.withLock { $0.count } }

    /// The fact stored as these texts, decoded by `decode` when they are not cached.
    func fact(kind: String, payload: String, transaction: String?, renewal: String?, decode: () throws -> LedgerFact) rethrows -> LedgerFact {
        let key = Self.key(kind: kind, texts: [payload, transaction, renewal])
        if let hit = entries.withLock({ $0[key] }) { return hit }
        let fact = try decode()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = fact
        }
        return fact
    }

    /// The digest of the kind and each text, every part length-prefixed (and absent ones marked) so that no two
    /// different inputs share a byte stream.
    private static func key(kind: String, texts: [String?]) -> SHA256.Digest {
        var hasher = SHA256()
        for part in [kind] + texts {
            guard var part else {
                hasher.update(data: [0xFF])
                continue
            }
            var length = UInt64(part.utf8.count).littleEndian
            hasher.update(data: [0x01])
            withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
            part.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        return hasher.finalize()
    }
}
