import Foundation
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Facts' JSON texts go to PostgreSQL as the verified bytes (``UTF8Text``), not through `String`: what arrives must be
/// the text those bytes spell, alone and in arrays, and bytes that are not UTF-8 must fail the statement, never be
/// stored repaired.
@Suite("Store: UTF-8 text sent as bytes")
struct UTF8TextTests {
    @Test func bytesArriveAsTheTextTheySpellAloneAndInArrays() async throws {
        let texts = ["{\"a\":1}", "", "plain ASCII", "é, ü, 🍎 and \u{1F}", String(repeating: "x", count: 20_000)]
        try await TestDatabase.withFresh { db in
            for text in texts {
                let same = try await db.client.query("SELECT \(UTF8Text(Data(text.utf8)))::text = \(text)", logger: db.logger)
                    .decode(Bool.self).readToEnd()
                #expect(same == [true], "\(text.prefix(20))")
            }
            let array = texts.map { UTF8Text(Data($0.utf8)) }
            let read = try await db.client.query(
                "SELECT t FROM unnest(\(array)::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i", logger: db.logger
            ).decode(String.self).readToEnd()
            #expect(read == texts)
        }
    }

    @Test func bytesThatAreNotUTF8FailTheStatement() async throws {
        try await TestDatabase.withFresh { db in
            for bytes: [UInt8] in [[0xE9], [0x41, 0xC3], [0xFF, 0xFE], [0x41, 0x00, 0x42]] {
                await #expect(throws: PSQLError.self, "\(bytes)") {
                    try await db.client.query("SELECT \(UTF8Text(Data(bytes)))::text", logger: db.logger).readToEnd()
                }
            }
        }
    }
}
