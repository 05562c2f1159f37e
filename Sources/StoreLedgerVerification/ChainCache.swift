import Crypto
import Foundation
import Synchronization
import X509

/// Remembers `x5c` headers whose (leaf, intermediate) chain to a trusted root with Apple's markers, so a steady
/// stream of JWS from the same signing certificate costs one ECDSA verification each instead of three — and no
/// base64 or DER decoding of the certificates either: the key is the header's certificate strings as received,
/// so a hit needs neither.
///
/// What is cached is date-independent ("this pair, through this root, meets the policy") plus the validity window
/// of the whole validated chain; a lookup hits only when the new `signedDate` lies inside that window, so an
/// expired or not-yet-valid certificate is never accepted from the cache. Bounded, least recently used first out.
final class ChainCache: Sendable {
    /// The `x5c` entries exactly as received (base64 DER, leaf first; all of them, so a hit implies every entry
    /// decoded as a certificate once). Roots and policy are fixed per verifier.
    ///
    /// The certificates' hash is computed once, when the key is made: a key made with a remembered header (see
    /// ``RecentHeaders``) costs a lookup no hashing of its ~4 kB of base64.
    struct Key: Hashable, Sendable {
        /// The base64 certificates.
        let certificates: [String]
        private let certificatesHash: Int

        /// Keys an `x5c` header.
        init(x5c: [String]) {
            certificates = x5c
            var hasher = Hasher()
            hasher.combine(x5c)
            certificatesHash = hasher.finalize()
        }

        /// Keys a (leaf, intermediate) pair given as DER.
        init(leafDER: Data, intermediateDER: Data) {
            self.init(x5c: [leafDER.base64EncodedString(), intermediateDER.base64EncodedString()])
        }

        /// Equal certificates (the precomputed hashes first, then the strings).
        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.certificatesHash == rhs.certificatesHash && lhs.certificates == rhs.certificates
        }

        /// Feeds the precomputed hash.
        func hash(into hasher: inout Hasher) {
            hasher.combine(certificatesHash)
        }
    }

    /// A validated pair: its chain's validity window and the leaf's signature-checking key.
    struct Entry: Sendable {
        /// The latest `notBefore` in the validated chain.
        let validFrom: Date
        /// The earliest `notAfter` in the validated chain.
        let validUntil: Date
        /// The leaf's P-256 public key, which must have made the JWS's ES256 signature.
        let leafKey: P256.Signing.PublicKey

        /// Whether `date` lies inside the window.
        func covers(_ date: Date) -> Bool {
            validFrom <= date && date <= validUntil
        }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var recency: [Key] = []
        var hits = 0
        var chainValidations = 0
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// Creates a cache holding at most `capacity` pairs (0 caches nothing).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The entry for `key` if its window covers `date`; counts a hit.
    func lookup(_ key: Key, at date: Date) -> Entry? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.covers(date) else { return nil }
            state.hits += 1
            if let index = state.recency.firstIndex(of: key) {
                state.recency.remove(at: index)
            }
            state.recency.append(key)
            return entry
        }
    }

    /// Counts one full chain validation.
    func recordChainValidation() {
        state.withLock { $0.chainValidations += 1 }
    }

    /// Remembers `entry`, evicting the least recently used pair beyond capacity.
    func insert(_ entry: Entry, for key: Key) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: key) != nil,
                let index = state.recency.firstIndex(of: key)
            {
                state.recency.remove(at: index)
            }
            state.recency.append(key)
            while state.recency.count > capacity {
                state.entries[state.recency.removeFirst()] = nil
            }
        }
    }

    /// The current counters.
    var statistics: ChainCacheStatistics {
        state.withLock { state in
            ChainCacheStatistics(
                hits: state.hits,
                chainValidations: state.chainValidations,
                entries: state.entries.count,
                capacity: capacity
            )
        }
    }
}
