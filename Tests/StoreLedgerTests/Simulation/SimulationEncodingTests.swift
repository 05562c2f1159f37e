import Foundation
import StoreLedgerSimulation
import Testing

/// The byte-level encodings the simulator writes: base64url and the request body.
@Suite("Simulation: encodings")
struct SimulationEncodingTests {
    /// A notification carrying `signedPayload`.
    func notification(_ signedPayload: String) -> SimulatedNotification {
        SimulatedNotification(
            signedPayload: signedPayload, notificationUUID: nil, type: nil, subtype: nil,
            originalTransactionID: nil, transactionID: nil, signedDate: nil
        )
    }

    @Test("base64url is unpadded RFC 4648 §5 for every length, and decodes back")
    func base64URL() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...200 {
            let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let encoded = JWSEncoding.base64URL(bytes)
            #expect(!encoded.contains(where: { "+/=".contains($0) }))
            var standard = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
            #expect(Data(base64Encoded: standard) == bytes, "length \(length)")
        }
    }

    @Test(
        "the body is {\"signedPayload\": …} exactly, for a JWS and for anything that needs escaping",
        arguments: [
            "eyJhbGciOiJFUzI1NiJ9.eyJ4IjoxfQ.c2ln-_", "", "quote \" and \\ backslash", "line\nbreak", "é/🦊",
        ])
    func body(_ signedPayload: String) throws {
        let body = notification(signedPayload).body
        let object = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect(object.count == 1)
        #expect(object["signedPayload"] as? String == signedPayload)
        #expect(!body.contains(UInt8(ascii: "\n")))
    }
}
