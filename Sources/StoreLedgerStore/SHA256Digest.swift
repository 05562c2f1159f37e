import Crypto
import Foundation

/// SHA-256 digests as the store writes them: bytes, or lower-case hex.
enum SHA256Digest {
    /// The digest bytes of a string's UTF-8 bytes.
    static func of(_ text: String) -> [UInt8] { Array(SHA256.hash(data: Data(text.utf8))) }

    /// The digest of `bytes` in lower-case hex (64 characters).
    static func hex(of bytes: some DataProtocol) -> String { hex(SHA256.hash(data: bytes)) }

    /// A digest already computed, in lower-case hex (two characters per byte).
    static func hex(_ digest: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(2 * SHA256.byteCount)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
