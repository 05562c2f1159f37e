import Foundation
import StoreLedgerTestSupport
import Testing

/// `storeledger verify --benchmark N --each-line FILE`: the verification limit measured over many notifications (the
/// ones bench/drain's worker drains), not one repeated; the real executable, as the benches run it.
@Suite("verify --benchmark --each-line")
struct VerifyBenchmarkTests {
    static let pki = try! TestPKI()

    /// A directory holding the test PKI's root as DER and `lines` as a JSON Lines file (lines ended by `separator`,
    /// then a blank line); returns the two paths.
    private static func files(_ lines: [String], separator: String = "\n") throws -> (directory: URL, root: String, bodies: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storeledger-verify-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let root = directory.appendingPathComponent("root.der")
        try pki.writeRootDER(to: root)
        let bodies = directory.appendingPathComponent("bodies.jsonl")
        try Data((lines.joined(separator: separator) + separator + separator).utf8).write(to: bodies)
        return (directory, root.path, bodies.path)
    }

    /// A notification body as Apple posts it, for `signer`'s app, with a nested transaction and renewal info.
    private static func body(_ signer: TestSigner, transactionID: String) throws -> String {
        let token = try signer.signedNotification(
            type: "DID_RENEW",
            transaction: signer.transactionPayload(transactionID: transactionID),
            renewalInfo: signer.renewalInfoPayload()
        )
        return #"{"signedPayload":"\#(token)"}"#
    }

    /// Runs `storeledger verify` with `arguments` and returns its exit status and output.
    private static func verify(_ arguments: [String]) async throws -> (status: Int32?, output: String) {
        let process = try StoreLedgerProcess(["verify"] + arguments, environment: [:])
        defer { process.cleanUp() }
        let status = await process.waitForExit(within: .seconds(120))
        return (status, process.output)
    }

    @Test("every line is verified in turn and the report says over how many distinct notifications")
    func everyLineInTurn() async throws {
        let signer = Self.pki.signer()
        let lines = try (1...3).map { try Self.body(signer, transactionID: "200000000000000\($0)") }
        let files = try Self.files(lines)
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let run = try await Self.verify([
            "--root", files.root, "--bundle-id", signer.bundleID, "--environment", "Sandbox", "--benchmark", "7", "--each-line", files.bodies,
        ])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("iterations: 7 over 3 distinct input(s)"), "\(run.output)")
        #expect(run.output.contains("verifications/s: "), "\(run.output)")
    }

    @Test("CRLF and CR line ends and lines of whitespace: the same notifications, each once")
    func lineEndsAndBlankLines() async throws {
        let signer = Self.pki.signer()
        let lines = try (1...3).map { try Self.body(signer, transactionID: "200000000000000\($0)") }
        for separator in ["\r\n", "\r", "\n \t\n"] {
            let files = try Self.files(lines, separator: separator)
            defer { try? FileManager.default.removeItem(at: files.directory) }
            let run = try await Self.verify([
                "--root", files.root, "--bundle-id", signer.bundleID, "--environment", "Sandbox", "--benchmark", "6", "--each-line", files.bodies,
            ])
            #expect(run.status == 0, "\(separator.debugDescription): \(run.output)")
            #expect(run.output.contains("iterations: 6 over 3 distinct input(s)"), "\(separator.debugDescription): \(run.output)")
        }
    }

    @Test("a line that does not verify stops the benchmark with that failure's exit status")
    func aLineThatDoesNotVerifyStopsTheRun() async throws {
        let signer = Self.pki.signer()
        let stranger = try TestPKI().signer()
        let files = try Self.files([
            try Self.body(signer, transactionID: "2000000000000001"), try Self.body(stranger, transactionID: "2000000000000002"),
        ])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let run = try await Self.verify([
            "--root", files.root, "--bundle-id", signer.bundleID, "--environment", "Sandbox", "--benchmark", "4", "--each-line", files.bodies,
        ])
        #expect(run.status == 12, "untrusted chain: \(run.output)")
        #expect(!run.output.contains("verifications/s"), "\(run.output)")
    }

    @Test("--each-line without --benchmark is a usage error")
    func eachLineNeedsBenchmark() async throws {
        let files = try Self.files([try Self.body(Self.pki.signer(), transactionID: "2000000000000001")])
        defer { try? FileManager.default.removeItem(at: files.directory) }
        let run = try await Self.verify(["--root", files.root, "--each-line", files.bodies])
        #expect(run.status == 64, "\(run.output)")
        #expect(run.output.contains("--each-line needs --benchmark"), "\(run.output)")
    }
}
