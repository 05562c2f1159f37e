import Foundation
import Testing

@testable import StoreLedgerCore

/// The one envelope parser the receiver and the worker share: a repeated key is refused, so both always read the
/// same `signedPayload`.
@Suite("Core: notification envelope")
struct NotificationEnvelopeTests {
    /// The parse error's sentence, nil when `body` parses.
    func refusal(_ body: Data) -> String? {
        do {
            _ = try NotificationEnvelope.parse(body)
            return nil
        } catch {
            return error.description
        }
    }

    func refusal(_ body: String) -> String? { refusal(Data(body.utf8)) }

    @Test(arguments: [
        #"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#,
        #"{"signedPayload":"a.b.c", "signedPayload":"a.b.c"}"#,
        #"{"signedPayload":"a.b.c","signed\u0050ayload":"d.e.f"}"#,
        #"{"signed\u0050ayload":"a.b.c","signedPayload":"d.e.f"}"#,
        #"{"signedPayload":"a.b.c","extra":1,"extra":{"x":2}}"#,
        #"{"signedPayload":"a.b.c","\u00e9":1,"e\u0301":2}"#,
        #"{"signedPayload":"a.b.c","signedPayload":"d.e.f",}"#,
    ])
    func aRepeatedTopLevelKeyIsRefused(_ body: String) {
        let reason = refusal(body)
        #expect(reason?.contains("more than once") == true, "\(body): \(reason ?? "accepted")")
    }

    @Test func theRefusalNamesTheKey() {
        #expect(
            refusal(#"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#)
                == #"the body has the key "signedPayload" more than once; each key may appear only once"#)
    }

    /// The reason is logged: a key holding a newline or a control character must not write a line of its own.
    @Test func theRefusalEscapesTheKey() {
        let reason = refusal(#"{"a\nINFO forged\u0007":1,"a\nINFO forged\u0007":2}"#)
        #expect(reason == #"the body has the key "a\nINFO forged\u{07}" more than once; each key may appear only once"#)
    }

    @Test(arguments: [
        #"{"signedPayload":"a.b.c"}"#,
        #" { "signedPayload" : "a.b.c" } "#,
        #"{"signedPayload":"a.b.c",}"#,
        #"{"a":"}\"{,:","b":[1,{"signedPayload":"]"},[]],"c":{"signedPayload":"x","signedPayload":"y"},"signedPayload":"a.b.c","d":true,"e":null,"f":-1.5e3}"#,
        #"{"signedPayload":"a.b.c","signedpayload":"d.e.f","s\u00e9":"1","se\u0300":"2"}"#,
    ])
    func uniqueKeysParseWhateverTheValuesHold(_ body: String) throws {
        #expect(try NotificationEnvelope.parse(Data(body.utf8)).signedPayload == "a.b.c")
    }

    @Test func otherEncodingsFoundationAcceptsStillParseAndAreCheckedToo() throws {
        let single = #"{"signedPayload":"a.b.c"}"#
        let repeated = #"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#
        #expect(try NotificationEnvelope.parse(Data([0xEF, 0xBB, 0xBF]) + Data(single.utf8)).signedPayload == "a.b.c")
        for encoding: String.Encoding in [.utf16, .utf16LittleEndian, .utf16BigEndian, .utf32LittleEndian, .utf32BigEndian] {
            let body = try #require(single.data(using: encoding))
            #expect(try NotificationEnvelope.parse(body).signedPayload == "a.b.c", "\(encoding)")
            #expect(refusal(try #require(repeated.data(using: encoding)))?.contains("more than once") == true, "\(encoding)")
        }
    }

    @Test func whatWasRefusedBeforeIsStillRefused() {
        for body in ["", "[]", "{}", #"{"signedPayload":1}"#, #"{"signedPayload":""}"#, #"{"signedPayload":"a.b.c""#] {
            #expect(refusal(body) != nil, "\(body)")
        }
    }

    /// What Foundation's parser reads as the body's `signedPayload` (nil when it reads none).
    static func foundationSignedPayload(_ body: Data) -> String? {
        ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any])?["signedPayload"] as? String
    }

    @Test(arguments: [
        #"{"signedPayload":"eyJhbGciOiJFUzI1NiJ9.eyJub3RpZmljYXRpb25UeXBlIjoiVEVTVCJ9.c2ln-_"}"#,
        #" { "signedPayload" : "a.b.c" } "#,
        "{\n\t\"signedPayload\":\r\n\"a.b.c\"\n}\n",
        "{\"signedPayload\":\"a b+c/=~!\u{7F}\"}",  // printable ASCII outside the JWS alphabet reads the same in any parser
    ])
    func applesExactShapeIsReadWithoutTheFullParserAndAgreesWithIt(_ body: String) throws {
        let data = Data(body.utf8)
        let fast = try #require(NotificationEnvelope.exactEnvelope(data), "Apple's shape must take the direct reading")
        #expect(fast == Self.foundationSignedPayload(data))
        #expect(try NotificationEnvelope.parse(data).signedPayload == fast)
    }

    @Test(arguments: [
        #"{"signedPayload":"a\/b.c"}"#,  // an escape: the full parser decides
        #"{"signedPayload":""}"#,
        #"{"signedPayload":"a.b.c","signedPayload":"d.e.f"}"#,
        #"{"signedPayload":"a.b.c","extra":1}"#,
        #"{"signedPayload":"a.b.c",}"#,
        #"{"signedPayload":"a.b.c"}x"#,
        #"{"signedPayload":"a.b.c"}{}"#,
        "{\"signedPayload\":\"a\u{1F}b.c\"}",  // a control byte: invalid JSON, the full parser refuses it
        "{\"signedPayload\":\"a\u{E9}b.c\"}",  // non-ASCII: the full parser decides
        #"{"signedPayload":"a.b.c""#,
        #"{"signedPayload":1}"#,
        #"{"signed\u0050ayload":"a.b.c"}"#,
        #"["signedPayload","a.b.c"]"#,
        "\u{FEFF}{\"signedPayload\":\"a.b.c\"}",
    ])
    func anyOtherBodyGoesToTheFullParser(_ body: String) {
        #expect(NotificationEnvelope.exactEnvelope(Data(body.utf8)) == nil)
    }

    /// The plain-string scan reads thirty-two bytes a step, then eight: every byte value, at positions across both
    /// kinds of steps' edges and in the tail of a token several steps long, alone or after another stopping byte, must
    /// stop it exactly where a byte-by-byte scan stops (at a quote, a backslash, a control or a non-ASCII byte).
    @Test func thePlainStringScanStopsWhereAByteByByteScanStops() {
        func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") }
        let token = Array(String(repeating: "eyJhbGciOiJFUzI1NiJ9.x-_Z09az", count: 3).utf8)  // 87 bytes
        for byte in UInt8.min...UInt8.max {
            for position in [0, 1, 7, 8, 9, 15, 16, 24, 31, 32, 33, 39, 47, 56, 63, 64, 71, 72, 79, 80, 81, 85, 86] {
                for earlier in [nil, UInt8(0xFF), UInt8(ascii: "\""), UInt8(0x00)] where earlier == nil || position > 0 {
                    var bytes = token
                    bytes[position] = byte
                    if let earlier { bytes[position - 1] = earlier }
                    let expected = bytes.firstIndex { !isPlain($0) } ?? bytes.count
                    let found = bytes.withUnsafeBufferPointer { PlainJSONReader.endOfPlainStringBytes($0, from: 0) }
                    #expect(found == expected, "byte \(byte) at \(position) after \(earlier.map(String.init) ?? "a plain byte")")
                }
            }
        }
        for start in 0...token.count {
            #expect(token.withUnsafeBufferPointer { PlainJSONReader.endOfPlainStringBytes($0, from: start) } == token.count)
        }
    }

    /// A notification-sized body of Apple's shape takes the direct reading, and an escape, a control or a non-ASCII
    /// byte anywhere in its token sends it to the full parser, which reads what Foundation reads (or refuses it).
    @Test func aLongTokenIsReadDirectlyUnlessItHoldsAnEscapeAControlOrANonASCIIByte() throws {
        let token = String(repeating: "eyJhbGciOiJFUzI1NiJ9", count: 700) + ".payload_-." + String(repeating: "c2ln", count: 30)
        let body = Data(#"{"signedPayload":"\#(token)"}"#.utf8)
        #expect(NotificationEnvelope.exactEnvelope(body) == token)
        for position in [0, 7, 16, 5_000, 13_999, token.utf8.count - 2] {
            for replacement: [UInt8] in [Array(#"\/"#.utf8), [0x1F, 0x41], [0xC3, 0xA9], [0xE9, 0x41]] {
                var broken = Array(token.utf8)
                broken.replaceSubrange(position..<(position + 2), with: replacement)
                let brokenBody = Data(#"{"signedPayload":""#.utf8) + Data(broken) + Data(#""}"#.utf8)
                #expect(NotificationEnvelope.exactEnvelope(brokenBody) == nil, "\(replacement) at \(position)")
                #expect((try? NotificationEnvelope.parse(brokenBody).signedPayload) == Self.foundationSignedPayload(brokenBody))
            }
        }
    }
}
