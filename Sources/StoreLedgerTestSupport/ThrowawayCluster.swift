package import Foundation
package import StoreLedgerStore

/// A private Postgres cluster for a test that must stop and restart the server (so it cannot
/// share the suite's server). Driven by the repository's `scripts/pg`, as development is.
package struct ThrowawayCluster: Sendable {
    /// The cluster's folder.
    package let directory: String
    /// Its TCP port (kept across restarts).
    package let port: Int
    /// Its URL.
    package let url: DatabaseURL

    /// The repository root, found from this source file's path.
    package static var repositoryRoot: URL {
        // Sources/StoreLedgerTestSupport/ThrowawayCluster.swift → the repository.
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// A new folder's path for a throwaway server of `kind` ("test" for a cluster, "pgbouncer"): under
    /// STORELEDGER_TEST_SCRATCH when set (scripts/test sets it, and destroys whatever a run killed midway left there),
    /// else under /tmp. Kept short: a cluster's unix socket lives in it, and its path may not pass 107 bytes.
    package static func scratchDirectory(_ kind: String) -> String {
        let parent = ProcessInfo.processInfo.environment["STORELEDGER_TEST_SCRATCH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return "\(parent)/storeledger-\(kind)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// Creates and starts a cluster in a new temporary folder.
    package static func start() async throws -> ThrowawayCluster {
        let directory = scratchDirectory("test")
        let output = try await script(["start", directory])
        let url = try DatabaseURL(output.trimmingCharacters(in: .whitespacesAndNewlines))
        return ThrowawayCluster(directory: directory, port: url.port, url: url)
    }

    /// Stops the server (fast shutdown).
    package func stop() async throws { _ = try await Self.script(["stop", directory]) }

    /// Creates and starts a streaming standby of this (running) cluster in a new temporary folder: a base backup,
    /// then asynchronous replication.
    package func makeStandby() async throws -> ThrowawayCluster {
        let standby = Self.scratchDirectory("test")
        let output = try await Self.script(["standby", standby, directory])
        let url = try DatabaseURL(output.trimmingCharacters(in: .whitespacesAndNewlines))
        return ThrowawayCluster(directory: standby, port: url.port, url: url)
    }

    /// Promotes this standby to a primary (a new timeline), as a failover does.
    package func promote() async throws { _ = try await Self.script(["promote", directory]) }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`): committed transactions survive only through
    /// WAL recovery at the next start.
    package func crash() async throws { _ = try await Self.script(["crash", directory]) }

    /// Starts the server again on the same port.
    package func restart() async throws { _ = try await Self.script(["start", directory, String(port)]) }

    /// Stops the server and deletes its folder.
    package func destroy() async { _ = try? await Self.script(["destroy", directory]) }

    /// Starts a cluster (``start()``), runs `body` with it and destroys it, whatever `body` did.
    package static func withRunning<Result>(_ body: (ThrowawayCluster) async throws -> Result) async throws -> Result {
        let cluster = try await start()
        do {
            let result = try await body(cluster)
            await cluster.destroy()
            return result
        } catch {
            await cluster.destroy()
            throw error
        }
    }

    /// Runs `scripts/pg` with `arguments` (always durable: fsync on, whatever the calling shell exported, since crash
    /// tests depend on it) and returns its standard output.
    @discardableResult
    static func script(_ arguments: [String]) async throws -> String {
        let result = try await RepositoryScript(name: "pg").run(arguments, environment: ["PG_FSYNC": "on"])
        guard result.status == 0 else {
            throw StoreError.configuration("scripts/pg \(arguments.joined(separator: " ")) failed: \(result.errors)")
        }
        return result.output
    }
}
