import Foundation
import Testing

@testable import StoreLedgerVerification

/// The JWS segment decoder: exactly RFC 4648 §5, agreeing with Foundation on every valid input.
@Suite("Verification: base64url segments")
struct Base64URLVerificationTests {
    /// Decodes `text` as a JWS segment.
    func decode(_ text: String) -> Data? {
        CompactJWS.base64URLDecode(Array(text.utf8)[...])
    }

    @Test("agrees with Foundation for every length 0…300, padded and unpadded")
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let padded = bytes.base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            let unpadded = padded.replacingOccurrences(of: "=", with: "")
            #expect(decode(unpadded) == bytes, "length \(length), unpadded")
            #expect(decode(padded) == bytes, "length \(length), padded")
        }
    }

    @Test("decodes a segment inside a larger buffer (a slice not starting at 0)")
    func slice() {
        let token = Array("eyJhIjoxfQ.e30.xyz".utf8)
        let firstDot = token.firstIndex(of: UInt8(ascii: "."))!
        let second = token[(firstDot + 1)...].firstIndex(of: UInt8(ascii: "."))!
        #expect(CompactJWS.base64URLDecode(token[(firstDot + 1)..<second]) == Data("{}".utf8))
    }

    @Test(
        "refuses the standard alphabet, foreign characters, stray padding and impossible lengths",
        arguments: [
            "ab+c", "ab/c", "ab c", "ab.c", "abc\u{e9}", "a=bc", "abcde", "a", "ab=", "ab===", "abc==",
        ])
    func refuses(_ text: String) {
        #expect(decode(text) == nil)
    }
}
