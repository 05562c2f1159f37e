import Foundation
import StoreLedgerCore
import Testing

@testable import StoreLedgerStore

/// The JSON the read model writes through `jsonb_populate_record`: valid JSON, exact strings, exact instants.
@Suite("Processing: read model row JSON")
struct ReadModelJSONTests {
    /// A row with every kind of value the read model writes.
    struct SampleRow: ReadModelRow {
        static let columns = ["text", "tricky", "flag", "count", "big", "negative", "absent", "at"]
        let values: [ColumnValue]
    }

    /// The row's JSON text, as the upsert writes it into its array.
    static func json(_ row: some ReadModelRow) throws -> String {
        var out = JSONTextWriter()
        try row.write(to: &out)
        return out.text
    }

    /// The JSON text of one timestamp value.
    static func json(_ timestamp: Timestamp) -> String {
        var out = JSONTextWriter()
        ColumnValue(timestamp).write(to: &out)
        return out.text
    }

    @Test("rows are JSON objects Foundation reads back to the same values, NULLs included")
    func roundTrip() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} nul \u{00} unit \u{1F} é 🦊 \u{2028}"
        let row = SampleRow(values: [
            ColumnValue("com.example.app"), ColumnValue(tricky), ColumnValue(true), ColumnValue(Int32(-7)),
            ColumnValue(Int64(9_007_199_254_740_993)), ColumnValue(Int64.min), ColumnValue(nil as String?),
            ColumnValue(Timestamp(Date(timeIntervalSince1970: 1_763_800_000.123))),
        ])
        let json = try Self.json(row)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["text"] as? String == "com.example.app")
        #expect(object["tricky"] as? String == tricky)
        #expect(object["flag"] as? Bool == true)
        #expect((object["count"] as? NSNumber)?.int32Value == -7)
        #expect(json.contains("\"big\":9007199254740993"))
        #expect(json.contains("\"negative\":-9223372036854775808"))
        #expect(object["absent"] is NSNull)
        #expect(object["at"] as? String == "2025-11-22T08:26:40.123Z")
        #expect(Array(object.keys).sorted() == SampleRow.columns.sorted())
        #expect(json.hasPrefix(#"{"text":"com.example.app","tricky":"#), "keys in column order")
    }

    @Test("timestamps agree with Foundation's ISO 8601 format to the millisecond, across leap years and centuries")
    func timestampsAgreeWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let fixed: [Int64] = [0, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_709_164_800_500, 253_402_300_799_999]
        let random = (0..<2_000).map { _ in Int64.random(in: 0...4_102_444_800_000, using: &generator) }
        for milliseconds in fixed + random {
            // A quarter millisecond in, so Foundation's answer is the same whether it truncates or rounds.
            let reference = format.format(Date(timeIntervalSince1970: (Double(milliseconds) + 0.25) / 1000))
            #expect(Self.json(Timestamp(millisecondsSince1970: Double(milliseconds))) == "\"\(reference)\"", "at \(milliseconds) ms")
        }
    }

    @Test("instants before 1970 are written with the right calendar date")
    func instantsBeforeTheEpoch() {
        #expect(Self.json(Timestamp(millisecondsSince1970: -1)) == #""1969-12-31T23:59:59.999Z""#)
        #expect(Self.json(Timestamp(millisecondsSince1970: -86_400_000)) == #""1969-12-31T00:00:00.000Z""#)
    }

    @Test("a row whose values do not match its columns is an error, not a silently shifted row")
    func valuesMustMatchColumns() {
        #expect(throws: StoreError.self) { try Self.json(SampleRow(values: [ColumnValue("only one")])) }
    }
}
