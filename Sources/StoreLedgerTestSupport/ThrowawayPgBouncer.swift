import Foundation
package import StoreLedgerStore

/// A private PgBouncer (Debian's package, as deployments run it) in front of the test server, for one test, driven by
/// the repository's `scripts/pgbouncer` as development is. Every database name is routed to the same name on the
/// server, so a ``TestDatabase`` is reachable through it by name.
package struct ThrowawayPgBouncer: Sendable {
    /// The pooler's folder (configuration, log, pid).
    package let directory: String
    /// How it pools: ``DatabasePooler/session`` or ``DatabasePooler/transaction``.
    package let mode: DatabasePooler
    /// Its TCP port on 127.0.0.1.
    package let port: Int

    private static let script = RepositoryScript(name: "pgbouncer")

    /// Whether pgbouncer is installed, installing it with apt-get first when it is missing and this process may
    /// (`scripts/pgbouncer install`); asked once per process.
    package static func isAvailable() async -> Bool {
        await Installation.shared.isAvailable()
    }

    /// Starts a PgBouncer in `mode` in front of `server`'s Postgres, with `poolSize` server connections per database
    /// (fewer than the clients' connections, so that they share server connections as they do at scale).
    package static func start(in front: DatabaseURL, mode: DatabasePooler, poolSize: Int = 2) async throws -> ThrowawayPgBouncer {
        guard mode != .direct else { throw StoreError.configuration("a PgBouncer pools in session or transaction mode") }
        guard let host = front.host else {
            throw StoreError.configuration("scripts/pgbouncer needs the test server on TCP, not on a unix socket")
        }
        let directory = ThrowawayCluster.scratchDirectory("pgbouncer")
        let server = "postgres://\(front.username)@\(host):\(front.port)/\(front.database ?? "postgres")"
        let result = try await script.run(["start", directory, server, mode.rawValue], environment: ["PGBOUNCER_POOL_SIZE": "\(poolSize)"])
        guard result.status == 0 else {
            throw StoreError.configuration("scripts/pgbouncer start \(directory) \(server) \(mode) failed: \(result.errors)")
        }
        let url = try DatabaseURL(result.output.trimmingCharacters(in: .whitespacesAndNewlines))
        return ThrowawayPgBouncer(directory: directory, mode: mode, port: url.port)
    }

    /// Runs `body` with a PgBouncer in `mode` in front of `server`, stopping it and deleting its folder afterwards
    /// whatever happens.
    package static func with<Result: Sendable>(
        mode: DatabasePooler, in front: DatabaseURL, poolSize: Int = 2, _ body: (ThrowawayPgBouncer) async throws -> Result
    ) async throws -> Result {
        let bouncer = try await start(in: front, mode: mode, poolSize: poolSize)
        do {
            let result = try await body(bouncer)
            await bouncer.destroy()
            return result
        } catch {
            await bouncer.destroy()
            throw error
        }
    }

    /// `url` (a database on the server behind it) reached through this PgBouncer instead: same user and database, the
    /// pooler's address, no TLS (the throwaway pooler has none).
    package func url(for url: DatabaseURL) -> DatabaseURL {
        var pooled = url
        pooled.host = "127.0.0.1"
        pooled.port = port
        pooled.unixSocketPath = nil
        pooled.sslMode = .disable
        return pooled
    }

    /// Stops the pooler and deletes its folder.
    package func destroy() async {
        _ = try? await Self.script.run(["stop", directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `scripts/pgbouncer install`, run once per process however many tests ask at once.
    private actor Installation {
        static let shared = Installation()
        private var answer: Task<Bool, Never>?

        func isAvailable() async -> Bool {
            if let answer { return await answer.value }
            // An install (apt-get) is given time: stopped midway, dpkg would need repairing by hand.
            let task = Task { (try? await ThrowawayPgBouncer.script.run(["install"], limit: .seconds(1800)).status) == 0 }
            answer = task
            return await task.value
        }
    }
}
