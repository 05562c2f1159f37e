import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// Real `storeledger work` processes running the real ledger handler, killed with SIGKILL mid-drain: every event
/// still ends `done` exactly as if nothing had happened, and the live read model equals a from-scratch rebuild.
@Suite("Worker crashes")
struct WorkerCrashTests {
    static let bundleID = "com.example.storeledger"

    /// Signed notification bodies of random simulated lifecycles (some delivered twice), as Apple would send them.
    static func bodies(pki: TestPKI, subscriptions: Int) throws -> [Data] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("crash-ca-\(UUID().uuidString)")
        let ca = DevelopmentCertificateAuthority(directory: folder, chain: pki.chain, wasCreated: true)
        let plan = SimulationPlan(
            selection: .random, subscriptions: subscriptions, shuffle: true, duplicateRate: 0.1, seed: 20_261_124,
            environment: .sandbox, bundleID: BundleID(bundleID), appAppleID: 1_234, now: Timestamp(Date())
        )
        return try plan.deliveries(signer: NotificationSigner(signer: ca.signer())).map(\.notification.body)
    }

    /// The environment a worker process runs with against `db`, trusting `pki`.
    static func workerEnvironment(_ db: TestDatabase, pki: TestPKI) -> [String: String] {
        [
            "DATABASE_URL": db.url.connectionString, "DATABASE_MAX_CONNECTIONS": "4",
            "APPLE_ROOT_CAS_DER_BASE64": pki.rootBase64, "APP_BUNDLE_ID": bundleID, "APPLE_ENVIRONMENTS": "Sandbox",
            "WORKER_LEASE_SECONDS": "2", "WORKER_BATCH_SIZE": "5", "WORKER_POLL_SECONDS": "1", "WORKER_CONCURRENCY": "2",
            "ADMIN_PORT": "off", "LOG_LEVEL": "warning",
        ]
    }

    func count(_ db: TestDatabase, _ condition: String) async throws -> Int {
        try await db.scalar(PostgresQuery(unsafeSQL: "SELECT count(*) FROM event_queue WHERE \(condition)"))
    }

    @Test(.timeLimit(.minutes(8)))
    func killedWorkersLoseNothingAndTheLedgerEqualsARebuild() async throws {
        try await TestDatabase.withFresh { db in
            let pki = try TestPKI()
            let bodies = try Self.bodies(pki: pki, subscriptions: 80)
            let log = EventLog(client: db.client)
            for body in bodies {
                _ = try await log.append(NewEvent(source: .appleNotification, body: ByteBuffer(bytes: body)), logger: db.logger)
            }
            let environment = Self.workerEnvironment(db, pki: pki)
            var workers = [try StoreLedgerProcess(["work"], environment: environment), try StoreLedgerProcess(["work"], environment: environment)]
            defer { for worker in workers { worker.cleanUp() } }

            // Kill a worker while it holds leases, three times, restarting it each time.
            var killsHoldingLeases = 0
            for kill in 0..<3 {
                let slot = kill % 2
                let victim = workers[slot]
                for _ in 0..<300 {
                    if try await count(db, "state = 'processing' AND lease_owner LIKE '%/\(victim.pid)/%'") > 0 { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                if try await count(db, "state = 'processing' AND lease_owner LIKE '%/\(victim.pid)/%'") > 0 { killsHoldingLeases += 1 }
                victim.send(SIGKILL)
                _ = await victim.waitForExit(within: .seconds(10))
                victim.cleanUp()
                workers[slot] = try StoreLedgerProcess(["work"], environment: environment)
            }
            #expect(killsHoldingLeases > 0, "no worker was killed while holding a lease: the drain finished too early to test anything")

            // Everything settles within lease + rescue sweep + poll, with margin.
            let settled = try await eventually(within: .seconds(60), every: .milliseconds(100)) {
                try await count(db, "state IN ('pending', 'processing')") == 0
            }
            #expect(settled, "events stuck; worker logs:\n\(workers.map(\.output).joined(separator: "\n"))")
            #expect(try await count(db, "state = 'done'") == bodies.count)
            #expect(try await count(db, "state IN ('dead', 'rejected')") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM event_attempt_errors WHERE outcome = 'lease_expired'") > 0)
            for worker in workers { worker.send(SIGTERM) }
            for worker in workers { _ = await worker.waitForExit(within: .seconds(15)) }

            // The live read model is exactly what replaying the log from scratch gives.
            let trust = try TrustConfiguration(rootCertificatesDER: [Data(pki.rootDER)])
            let handler = LedgerHandler(
                verifiers: try LedgerVerifiers(
                    apps: [AppIdentity(bundleID: Self.bundleID, appAppleID: nil)], environments: [.sandbox], trust: trust
                ))
            let report = try await Rebuilder(client: db.client, handler: handler).run(dryRun: true, logger: db.logger)
            #expect(report.differences.isEmpty, "\(report.differences.prefix(5))")
            #expect(report.eventsReplayed == bodies.count)
        }
    }
}
