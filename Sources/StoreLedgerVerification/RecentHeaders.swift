import Foundation
import Synchronization

/// The decoded headers of the last few distinct JWS header segments a verifier saw.
///
/// App Store JWS from one signing certificate carry byte-identical headers (`alg` and the `x5c` chain: about 4 kB
/// of base64), so in a steady stream every header after the first is the same bytes. Comparing those bytes with a
/// remembered segment costs far less than base64-decoding and JSON-parsing them and hashing the certificates for
/// the chain cache again; the decoded header is a function of its bytes, so nothing else changes. Only decoding is
/// saved: the chain cache still checks each JWS's `signedDate`, and every signature is still verified.
final class RecentHeaders: Sendable {
    private struct Entry: Sendable {
        let segment: [UInt8]
        let header: CompactJWS.Header
    }

    private let capacity: Int
    private let entries = Mutex<[Entry]>([])

    /// Remembers at most `capacity` headers (0 remembers none).
    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many headers it holds.
    var count: Int { entries.withLock { $0.count } }

    /// The header decoded from `segment`: remembered if these exact bytes were decoded before, else decoded by
    /// `decode` and remembered (most recent first; a failure is not remembered).
    func header(
        for segment: ArraySlice<UInt8>,
        decode: (ArraySlice<UInt8>) throws(VerificationError) -> CompactJWS.Header
    ) throws(VerificationError) -> CompactJWS.Header {
        if let header = entries.withLock({ entries in entries.first { Self.same($0.segment, segment) }?.header }) {
            return header
        }
        let header = try decode(segment)
        guard capacity > 0 else { return header }
        entries.withLock { entries in
            entries.insert(Entry(segment: Array(segment), header: header), at: 0)
            if entries.count > capacity { entries.removeLast(entries.count - capacity) }
        }
        return header
    }

    /// Byte equality, by length first.
    private static func same(_ remembered: [UInt8], _ segment: ArraySlice<UInt8>) -> Bool {
        guard remembered.count == segment.count else { return false }
        return remembered.withUnsafeBytes { a in
            segment.withUnsafeBytes { b in a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
        }
    }
}
