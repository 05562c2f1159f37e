import Foundation
import StoreLedgerCore
import Testing

@testable import StoreLedgerStore

/// The JSON the read model writes through `jsonb_populate_record`: valid JSON, exact strings, exact instants.
@Suite("Processing: read model row JSON")
struct ReadModelJSONTests {
    /// A row with every kind of value the read model writes.
    struct SampleRow: ReadModelRow {
        static let columns = ["text", "tricky", "flag", "count", "big", "ratio", "absent", "at"]
        let values: [String: Any?]
    }

    @Test("rows are JSON objects Foundation reads back to the same values, NULLs included")
    func roundTrip() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} é 🦊 \u{2028}"
        let row = SampleRow(values: [
            "text": "com.example.app", "tricky": tricky, "flag": true, "count": Int32(-7),
            "big": Int64(9_007_199_254_740_993), "ratio": 0.25, "absent": nil,
            "at": isoTimestamp(Timestamp(Date(timeIntervalSince1970: 1_763_800_000.123))),
        ])
        let json = try row.json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["text"] as? String == "com.example.app")
        #expect(object["tricky"] as? String == tricky)
        #expect(object["flag"] as? Bool == true)
        #expect((object["count"] as? NSNumber)?.int32Value == -7)
        #expect(json.contains("\"big\":9007199254740993"))
        #expect((object["ratio"] as? NSNumber)?.doubleValue == 0.25)
        #expect(object["absent"] is NSNull)
        #expect(object["at"] as? String == "2025-11-22T08:26:40.123Z")
        #expect(Array(object.keys).sorted() == SampleRow.columns.sorted())
    }

    @Test("timestamps agree with Foundation's ISO 8601 format to the millisecond, across leap years and centuries")
    func timestampsAgreeWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let fixed: [Int64] = [0, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_709_164_800_500, 253_402_300_799_999]
        let random = (0..<2_000).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for milliseconds in fixed + random {
            let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            // A quarter millisecond in, so Foundation's answer is the same whether it truncates or rounds.
            let reference = format.format(Date(timeIntervalSince1970: (Double(milliseconds) + 0.25) / 1000))
            #expect(isoTimestamp(Timestamp(date)) as? String == reference, "at \(milliseconds) ms")
        }
    }

    @Test("a value of a type JSON cannot hold is an error, not a silently wrong row")
    func unsupportedValue() {
        #expect(throws: StoreError.self) { try SampleRow(values: ["text": Date()]).json() }
        #expect(throws: StoreError.self) { try SampleRow(values: ["ratio": Double.nan]).json() }
    }
}
