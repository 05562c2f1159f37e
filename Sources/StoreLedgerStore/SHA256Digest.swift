import Crypto
import Foundation

/// SHA-256 digests as the store writes them: bytes, or lower-case hex.
enum SHA256Digest {
    /// The digest bytes of a string's UTF-8 bytes.
    static func of(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Data(text.utf8))) }

    /// The digest of `bytes` in lower-case hex (64 characters).
    static func hex(of bytes: some DataProtocol) -> String { hex(SHA256.hash(data: bytes)) }

    /// A digest already computed, in lower-case hex (two characters per byte), written straight into the string's
    /// storage (the worker names every fact it writes by such a digest).
    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let bytes = Array(digest)
        return String(unsafeUninitializedCapacity: 2 * bytes.count) { text in
            for (offset, byte) in bytes.enumerated() {
                text[2 * offset] = hexDigit(byte >> 4)
                text[2 * offset + 1] = hexDigit(byte & 0x0F)
            }
            return 2 * bytes.count
        }
    }

    /// The lower-case hex digit of `nibble` (0...15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }
}
