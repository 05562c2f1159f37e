package import Foundation
package import StoreLedgerStore

/// A `storeledger` process of this build (`.build/debug/storeledger`), started by a test with its own environment,
/// its output in a log file, and killed or stopped by the test: for faults only a real process has (kill -9, SIGTERM
/// while the database is down).
package final class StoreLedgerProcess: @unchecked Sendable {
    /// The running process.
    package let process: Process
    /// Where its standard output and error go.
    package let logURL: URL

    /// The executable built beside the tests, or an error saying how to build it.
    package static func executable() throws -> URL {
        let url = ThrowawayCluster.repositoryRoot.appendingPathComponent(".build/debug/storeledger")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw StoreError.configuration("\(url.path) is missing: build with `swift build --build-tests` (scripts/test does)")
        }
        return url
    }

    /// Starts `storeledger arguments…` with `environment` added to a minimal one (PATH, HOME).
    package init(_ arguments: [String], environment: [String: String]) throws {
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("storeledger-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let log = try FileHandle(forWritingTo: logURL)
        process = Process()
        process.executableURL = try Self.executable()
        process.arguments = arguments
        var base = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": NSTemporaryDirectory()]
        base.merge(environment) { $1 }
        process.environment = base
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// The process id.
    package var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (SIGKILL, SIGTERM…).
    package func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits up to `limit` for the process to exit, or until the calling task is cancelled; returns its exit status, or
    /// nil when it is still running.
    package func waitForExit(within limit: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + limit
        while process.isRunning && ContinuousClock.now < deadline {
            // A cancelled sleep returns at once: stop polling rather than spin a thread of the shared pool.
            guard (try? await Task.sleep(for: .milliseconds(20))) != nil else { break }
        }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// What it has written so far.
    package var output: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Kills it if it is still running and removes its log.
    package func cleanUp() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logURL)
    }

    deinit { cleanUp() }
}

extension DatabaseURL {
    /// The URL as a `postgres://` string a child process can be given (a test server's: TCP, no TLS).
    package var connectionString: String {
        let credentials = username + (password.map { ":" + $0 } ?? "")
        return "postgres://\(credentials)@\(host ?? "127.0.0.1"):\(port)/\(database ?? "")?sslmode=disable"
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read back, closed).
package func freeLoopbackPort() throws -> Int {
    let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socketDescriptor >= 0 else { throw StoreError.configuration("socket() failed") }
    defer { close(socketDescriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, length) } }
    guard bound == 0 else { throw StoreError.configuration("bind() failed") }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}
