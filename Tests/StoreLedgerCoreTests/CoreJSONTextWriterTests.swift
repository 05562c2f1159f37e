import Foundation
import StoreLedgerCore
import Testing

/// The writer of the fold states' and rows' JSON text: numbers as Swift prints them, and dates with every field padded.
@Suite("Core: JSON text writer")
struct CoreJSONTextWriterTests {
    /// The text `body` writes.
    func text(_ body: (inout JSONTextWriter) -> Void) -> String {
        var out = JSONTextWriter()
        body(&out)
        return out.text
    }

    @Test(
        "integers in decimal, from Int64.min to Int64.max, at digit counts' edges",
        arguments: [
            Int64.min, Int64.min + 1, -1_764_000_000_123, -10, -1, 0, 1, 9, 10, 99, 100, 1_764_000_000_123, Int64.max - 1, Int64.max,
        ] as [Int64]
    )
    func integers(_ value: Int64) {
        #expect(text { $0.integer(value) } == String(value))
        #expect(text { $0.number(Double(exactly: value) ?? 0) } == (Double(exactly: value).map { String(Int64($0)) } ?? "0"))
    }

    @Test("dates padded to four-digit years and two- and three-digit fields")
    func paddedDates() throws {
        // Proleptic Gregorian: 0001-01-01 is -62,135,596,800 s from the epoch (Foundation's formatter turns Julian
        // before 1582, so it is compared from 1600 on).
        #expect(text { $0.isoTimestamp(Timestamp(millisecondsSince1970: -62_135_596_799_993)) } == "\"0001-01-01T00:00:00.007Z\"")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for expected in ["1600-03-01T00:00:00.007Z", "1999-12-31T23:59:59.999Z", "2026-11-27T08:05:09.010Z"] {
            let date = try #require(formatter.date(from: expected))
            let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
            #expect(text { $0.isoTimestamp(Timestamp(millisecondsSince1970: milliseconds)) } == "\"\(expected)\"")
        }
    }

    @Test("keys from literals are written as written, escaped where JSON needs it, as keys known only at run time are")
    func keys() throws {
        let written = text { out in
            out.object { out in
                out.field("plain", integer: 1)
                out.key("q\"b\\s\u{1}")
                out.null()
                out.key(string: "t\n\"")
                out.bool(true)
                out.field("é", "v")
            }
        }
        #expect(written == #"{"plain":1,"q\"b\\s\u0001":null,"t\n\"":true,"é":"v"}"#)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["plain", "q\"b\\s\u{1}", "t\n\"", "é"])
    }
}
