import Foundation
import StoreLedgerStore

/// One of the repository's `scripts/`, run from a test as a developer would run it.
struct RepositoryScript: Sendable {
    /// What a run left behind.
    struct Result: Sendable {
        /// The exit status.
        var status: Int32
        /// Standard output.
        var output: String
        /// Standard error.
        var errors: String
    }

    /// The script's name under `scripts/`.
    let name: String

    /// Runs the script with `arguments`, `environment` added to this process's, and returns what it left; one that
    /// outlives `limit` is stopped (``Foundation/Process/runToExit(limit:)``) and fails by its status.
    ///
    /// Output goes through files, not pipes: a server the script starts inherits descriptors, and a pipe it held
    /// open would never reach end-of-file.
    func run(_ arguments: [String], environment: [String: String] = [:], limit: Duration = .seconds(300)) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("scripts-\(name)-\(UUID().uuidString)")
        let outputURL = scratch.appendingPathExtension("out")
        let errorURL = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outputURL)
            try? FileManager.default.removeItem(at: errorURL)
        }
        let process = Process()
        process.executableURL = ThrowawayCluster.repositoryRoot.appendingPathComponent("scripts/\(name)")
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        await process.runToExit(limit: limit)
        guard process.processIdentifier != 0 else {
            throw StoreError.configuration("could not run scripts/\(name)")
        }
        return Result(
            status: process.terminationStatus,
            output: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "",
            errors: (try? String(contentsOf: errorURL, encoding: .utf8)) ?? ""
        )
    }
}
