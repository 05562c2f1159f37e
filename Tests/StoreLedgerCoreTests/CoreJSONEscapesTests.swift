import Foundation
import StoreLedgerCore
import Testing

/// A NUL escape in a payload is found wherever it is, and nothing else is taken for one.
@Suite("JSON escapes: NUL")
struct JSONEscapesTests {
    @Test(arguments: [
        (#"{"a":"x\u0000y"}"#, true),
        (#"{"a":"\u0000"}"#, true),
        (#"{"a":"\\\u0000"}"#, true),
        (#"{"a":"ok","b":{"c":["\n","\u0000"]}}"#, true),
        (#"{"a":"x\\u0000y"}"#, false),
        (#"{"a":"\u00001"}"#, true),
        (#"{"a":"\u0001"}"#, false),
        (#"{"a":"\u000"}"#, false),
        (#"{"a":"\"}"#, false),
        (#"{"a":"plain"}"#, false),
        ("", false),
    ])
    func findsTheEscapeAndOnlyIt(json: String, holdsNUL: Bool) {
        #expect(JSONEscapes.containsNUL(Data(json.utf8)) == holdsNUL, "\(json)")
    }

    @Test func agreesWithFoundationOnWhatDecodesToANUL() throws {
        for text in ["a\u{0}b", "\\u0000", "\u{0}", "\\\u{0}", "plain", "\\"] {
            let json = try JSONEncoder().encode(["key": text])
            #expect(JSONEscapes.containsNUL(json) == text.contains("\u{0}"), "\(text.debugDescription) as \(String(decoding: json, as: UTF8.self))")
        }
    }
}
