import Foundation
import Logging
import StoreLedgerHTTP
import Testing

@Suite("Logs: LOG_FORMAT=json")
struct JSONLogHandlerTests {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var data: [Data] = []
        func append(_ line: Data) { lock.withLock { data.append(line) } }
        var all: [Data] { lock.withLock { data } }
    }

    @Test func eachLogLineIsOneJSONObjectWithLevelMessageAndMetadata() throws {
        let lines = Lines()
        var logger = Logger(label: "storeledger.test") { label in JSONLogHandler(label: label, write: { lines.append($0) }) }
        logger.logLevel = .info
        logger[metadataKey: "request_id"] = "r-1"
        logger.debug("not written")
        logger.notice("event \"rejected\"\nnext line", metadata: ["event": "42"])
        #expect(lines.all.count == 1)
        let line = try #require(lines.all.first)
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: String])
        #expect(object["level"] == "notice")
        #expect(object["label"] == "storeledger.test")
        #expect(object["message"] == "event \"rejected\"\nnext line")
        #expect(object["request_id"] == "r-1")
        #expect(object["event"] == "42")
        #expect(object["ts"].flatMap { ISO8601DateFormatter().date(from: $0) } != nil)
    }
}
