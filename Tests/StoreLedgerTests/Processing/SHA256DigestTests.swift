import Foundation
import Testing

@testable import StoreLedgerStore

/// The digests facts and fold states are named by: lower-case hex that PostgreSQL's `decode(..., 'hex')` reads back.
@Suite("Processing: SHA-256 digests in hex")
struct SHA256DigestTests {
    @Test("FIPS 180-2's test vectors, in lower-case hex")
    func knownVectors() {
        #expect(SHA256Digest.hex(of: Data("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256Digest.hex(of: Data()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("every byte value becomes its two digits, high nibble first")
    func everyByte() {
        let bytes = (UInt8.min...UInt8.max).map { $0 }
        let expected = bytes.map { String(format: "%02x", $0) }.joined()
        #expect(SHA256Digest.hex(bytes) == expected)
        #expect(SHA256Digest.hex([UInt8]()) == "")
    }
}
