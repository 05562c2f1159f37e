import Foundation
import StoreLedgerHTTP
import Testing

/// Seed 001's backend answered with JavaScript dates (`toISOString()`): its app reads that shape, so
/// ``JSONBody/DateStyle/javaScript`` must write exactly it.
@Suite("App API: dates as JavaScript writes them")
struct JSONBodyDateTests {
    @Test(arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_700_000_000.123, "2023-11-14T22:13:20.123Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500Z"),
        (1_700_000_000.0996, "2023-11-14T22:13:20.099Z"),
        (1_700_000_059.9996, "2023-11-14T22:14:19.999Z"),
        (-0.0005, "1970-01-01T00:00:00.000Z"),
        (-0.001, "1969-12-31T23:59:59.999Z"),
        (4_102_444_799.999, "2099-12-31T23:59:59.999Z"),
    ])
    func theTextIsToISOStrings(seconds: TimeInterval, expected: String) {
        #expect(JSONBody.javaScriptISOString(Date(timeIntervalSince1970: seconds)) == expected)
    }

    @Test func answersWriteTheirDatesInTheStyleTheyAreGiven() throws {
        struct Answer: Encodable { var at: Date }
        let at = Date(timeIntervalSince1970: 1_771_632_000.25)
        func text(_ style: JSONBody.DateStyle) throws -> String {
            String(decoding: try JSONBody.encoder(dates: style).encode(Answer(at: at)), as: UTF8.self)
        }
        #expect(try text(.javaScript) == #"{"at":"2026-02-21T00:00:00.250Z"}"#)
        #expect(try text(.wholeSeconds) == #"{"at":"2026-02-21T00:00:00Z"}"#)
    }
}
