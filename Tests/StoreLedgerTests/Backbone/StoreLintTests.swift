import Foundation
import StoreLedgerTestSupport
import Testing

/// Source checks that keep two durability mistakes from coming back: leaving a result early (an error after the
/// first row goes unseen), and writing outside a commit-checked transaction (an autocommitted statement's commit
/// failure is invisible to its caller). See `PostgresClient.inTransaction` and `AsyncSequence.readToEnd`.
@Suite("Store lint")
struct StoreLintTests {
    static let sources = ThrowawayCluster.repositoryRoot.appendingPathComponent("Sources")

    /// Every Swift file under Sources, with its path relative to the repository and its text.
    static func sourceFiles() throws -> [(path: String, text: String)] {
        let enumerator = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        var files: [(String, String)] = []
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            files.append((url.path.replacingOccurrences(of: sources.path + "/", with: ""), try String(contentsOf: url, encoding: .utf8)))
        }
        return files.sorted { $0.0 < $1.0 }
    }

    /// Where `pattern` (a regular expression) occurs in `text`: each match and the line it starts on.
    static func matches(of pattern: String, in text: String) -> [(range: Range<String.Index>, line: Int)] {
        var found: [(Range<String.Index>, Int)] = []
        var searchFrom = text.startIndex
        while let match = text.range(of: pattern, options: .regularExpression, range: searchFrom..<text.endIndex) {
            searchFrom = match.upperBound
            found.append((match, text[..<match.lowerBound].filter { $0 == "\n" }.count + 1))
        }
        return found
    }

    /// The bodies of the `for try await` loops in `text` (from the loop's opening brace to its closing one).
    static func asyncLoopBodies(in text: String) -> [(line: Int, body: String)] {
        let characters = Array(text)
        var bodies: [(Int, String)] = []
        var searchFrom = text.startIndex
        while let range = text.range(of: "for try await ", range: searchFrom..<text.endIndex) {
            searchFrom = range.upperBound
            var index = text.distance(from: text.startIndex, to: range.upperBound)
            var parentheses = 0
            var inString = false
            // The header ends at the first `{` outside parentheses and string literals.
            while index < characters.count {
                let character = characters[index]
                if character == "\"" { inString.toggle() }
                if !inString {
                    if character == "(" { parentheses += 1 }
                    if character == ")" { parentheses -= 1 }
                    if character == "{" && parentheses == 0 { break }
                }
                index += 1
            }
            let open = index
            var depth = 0
            while index < characters.count {
                if characters[index] == "{" { depth += 1 }
                if characters[index] == "}" {
                    depth -= 1
                    if depth == 0 { break }
                }
                index += 1
            }
            guard open < characters.count, index <= characters.count else { continue }
            let line = text[..<range.lowerBound].filter { $0 == "\n" }.count + 1
            bodies.append((line, String(characters[open..<min(index + 1, characters.count)])))
        }
        return bodies
    }

    @Test func noLoopOverAnAsyncSequenceIsLeftEarly() throws {
        var offenders: [String] = []
        for file in try Self.sourceFiles() {
            for loop in Self.asyncLoopBodies(in: file.text) where loop.body.range(of: #"\b(return|break)\b"#, options: .regularExpression) != nil {
                offenders.append("\(file.path):\(loop.line)")
            }
        }
        #expect(offenders.isEmpty, "leave no `for try await` loop early (use readToEnd() or firstAfterReadingAll()): \(offenders)")
    }

    @Test func writesGoThroughCommitCheckedTransactions() throws {
        let write = #"\b(INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|TRUNCATE|pg_notify|setval|storeledger_ensure_event_partitions)\b"#
        var offenders: [String] = []
        for file in try Self.sourceFiles() where !file.path.hasPrefix("StoreLedgerTestSupport/") {
            for call in Self.matches(of: #"client\.(query|execute|rows)\("#, in: file.text) {
                // The statement is what stands between the call and its `logger:` argument.
                let end = file.text.range(of: "logger:", range: call.range.upperBound..<file.text.endIndex)?.lowerBound ?? file.text.endIndex
                if file.text[call.range.upperBound..<end].range(of: write, options: .regularExpression) != nil {
                    offenders.append("\(file.path):\(call.line)")
                }
            }
        }
        #expect(offenders.isEmpty, "write through client.inTransaction (its COMMIT is checked), not an autocommitted statement: \(offenders)")
    }

    /// A pooled connection is leased through `withOpenConnection` (or `inTransaction`, or `rows` for one read), which
    /// never hands a body a connection the server had closed when it was leased: PostgresNIO drops a statement written
    /// to one without failing it. `withConnection` and the client's own `query` (which leases inside PostgresNIO) do not
    /// look.
    @Test func connectionsAreLeasedOpen() throws {
        var offenders: [String] = []
        for file in try Self.sourceFiles()
        where !file.path.hasSuffix("Database/PostgresClient+openConnection.swift") && !file.path.hasPrefix("StoreLedgerTestSupport/") {
            for call in Self.matches(of: #"\.(withConnection|leaseConnection)\b|\b(client|listenClient|listener)\.(query|execute)\("#, in: file.text)
            {
                offenders.append("\(file.path):\(call.line)")
            }
        }
        #expect(
            offenders.isEmpty,
            "lease with client.withOpenConnection, inTransaction or rows (they skip connections the server closed), not withConnection or client.query: \(offenders)"
        )
    }

    @Test func sqlLivesInTheStoreModule() throws {
        var offenders: [String] = []
        for file in try Self.sourceFiles() where !file.path.hasPrefix("StoreLedgerStore/") && !file.path.hasPrefix("StoreLedgerTestSupport/") {
            for call in Self.matches(of: #"\b(client|connection|\$0)\.(query|execute|withTransaction)\("#, in: file.text) {
                offenders.append("\(file.path):\(call.line)")
            }
        }
        #expect(offenders.isEmpty, "statements belong in StoreLedgerStore (a store type beside its table's other code): \(offenders)")
    }

    @Test func theLintFindsWhatItLooksFor() {
        let early = """
            for try await row in rows.decode(Int.self) { return row }
            for try await (a, b) in try await client.query("SELECT \\(x)", logger: logger).decode((Int, Int).self) where a > b {
                if a > 0 { break }
            }
            for try await value in rows { values.append(value) }
            """
        let bodies = Self.asyncLoopBodies(in: early)
        #expect(bodies.count == 3)
        #expect(bodies.map { $0.body.contains("return") || $0.body.contains("break") } == [true, true, false])
    }
}
