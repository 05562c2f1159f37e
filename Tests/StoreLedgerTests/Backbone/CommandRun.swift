import Foundation
import StoreLedgerStore
import StoreLedgerTestSupport

/// One command run to its end by a test: its standard input from a string, its output (standard output and error
/// together) through a file, killed when it outlives its limit (SIGTERM, then SIGKILL 10 s later).
struct CommandRun: Sendable {
    /// The exit status (or the signal's number plus 128 when killed).
    var status: Int32
    /// What it printed.
    var output: String

    /// Runs this build's `storeledger` with `arguments`, `environment` added to PATH and HOME.
    static func storeledger(
        _ arguments: [String], environment: [String: String] = [:], input: String? = nil, limit: Duration = .seconds(120)
    ) async throws -> CommandRun {
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        base.merge(environment) { $1 }
        return try await run(try StoreLedgerProcess.executable().path, arguments, environment: base, input: input, limit: limit)
    }

    /// Runs `executable` with `arguments`; `environment` replaces this process's when given.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
        limit: Duration = .seconds(120)
    ) async throws -> CommandRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("command-\(UUID().uuidString)")
        let outputURL = scratch.appendingPathExtension("out")
        let inputURL = scratch.appendingPathExtension("in")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: inputURL.path, contents: Data((input ?? "").utf8))
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: inputURL)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = input == nil ? FileHandle.nullDevice : try FileHandle(forReadingFrom: inputURL)
        let output = try FileHandle(forWritingTo: outputURL)
        process.standardOutput = output
        process.standardError = output
        await process.runToExit(limit: limit)
        guard process.processIdentifier != 0 else { throw StoreError.configuration("could not run \(executable)") }
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return CommandRun(status: status, output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
    }
}
