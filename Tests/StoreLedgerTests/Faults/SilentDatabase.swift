import Foundation
import Logging
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// A database that goes silent, for tests: an old primary frozen while its kernel still answers TCP, so neither the
/// server's limits nor PostgresNIO notice. Made by stopping a backend with SIGSTOP, on a server of the test's own.
enum SilentDatabase {
    /// Runs `body` with a fresh database on a private server, destroyed afterwards. A stopped backend must never be one
    /// of the shared server's: PostgreSQL's DROP DATABASE waits until every backend has answered a barrier, a stopped
    /// one too, so every other test's teardown would wait for as long as it stays stopped.
    static func withFreshDatabase(_ body: @Sendable (TestDatabase) async throws -> Void) async throws {
        try await ThrowawayCluster.withRunning { cluster in try await TestDatabase.withFresh(server: cluster.url, body) }
    }

    /// Stops the backend of `client`'s one connection (its pool must hold exactly one), runs `operation`, expects it to
    /// give up with ``DeadlineExceeded`` within 20 s (`what` names it in the issues), and resumes the backend whatever
    /// happened: when `operation` returns, or after 30 s if it does not (it then fails the test instead of hanging
    /// it). Records an issue when the backend cannot be signalled.
    static func expectGivesUp(
        _ what: String, on client: PostgresClient, logger: Logger, _ operation: () async throws -> Void
    ) async throws {
        let pid = try #require(try await client.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self).readToEnd().first)
        guard kill(pid, SIGSTOP) == 0 else {
            Issue.record("could not stop backend \(pid): errno \(errno) (the test needs to signal PostgreSQL's processes)")
            return
        }
        let resumeAtTheLatest = Task {
            guard (try? await Task.sleep(for: .seconds(30))) != nil else { return }  // cancelled: resumed already
            kill(pid, SIGCONT)
        }
        defer {
            resumeAtTheLatest.cancel()
            kill(pid, SIGCONT)
        }
        let stopped = ContinuousClock.now
        do {
            try await operation()
            Issue.record("\(what) answered while its backend was stopped")
        } catch {
            #expect(error is DeadlineExceeded, "\(what): \(error)")
        }
        #expect(stopped.duration(to: .now) < .seconds(20), "\(what) gave up late")
    }
}
