import Foundation
import Logging
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification

/// Drives events through the real handler and queue the way the worker does (claim → prepare →
/// apply and complete in one transaction), and reads the read model back for comparison.
struct LedgerPipeline {
    let db: TestDatabase
    let handler: LedgerHandler
    let signer: TestSigner

    /// A pipeline trusting `pki` for the lifecycle builders' app (`com.example.app`, Sandbox).
    init(_ db: TestDatabase, pki: TestPKI, bundleID: String = "com.example.app") throws {
        self.db = db
        let trust = try TrustConfiguration(rootCertificatesDER: [Data(pki.rootDER)])
        self.handler = LedgerHandler(
            verifiers: try LedgerVerifiers(
                apps: [AppIdentity(bundleID: bundleID, appAppleID: 1_234)], environments: [.sandbox, .production], trust: trust
            ))
        self.signer = TestSigner(pki: pki, bundleID: bundleID)
    }

    /// Appends one raw event.
    @discardableResult
    func append(source: EventSource, body: String, hint: EnvironmentHint? = nil) async throws -> EventID {
        try await EventLog(client: db.client).append(
            NewEvent(source: source, environmentHint: hint, body: ByteBuffer(string: body)), logger: db.logger
        ).id
    }

    /// Signs and appends each fact as the event it would arrive as.
    func append(_ facts: [LedgerFact]) async throws {
        for fact in facts {
            let event = try signer.signedEvent(for: fact)
            try await append(source: event.source, body: event.body)
        }
    }

    /// Processes everything ready in batches of `batchSize`.
    func drain(batchSize: Int = 7) async throws {
        let queue = EventQueue(client: db.client)
        while true {
            let batch = try await queue.claim(limit: batchSize, owner: "test", lease: .seconds(60), logger: db.logger)
            if batch.isEmpty { return }
            var prepared: [PreparedEvent] = []
            for event in batch { prepared.append(await handler.prepare(event, logger: db.logger)) }
            try await db.client.inTransaction(logger: db.logger) { connection in
                let outcomes = try await handler.apply(prepared, in: connection, logger: db.logger)
                try await EventQueue.complete(
                    zip(batch, outcomes).map { (event: $0, outcome: $1) }, owner: "test", policy: .init(), on: connection,
                    sessions: DatabaseSessions(), logger: db.logger
                )
            }
        }
    }

    /// The read model as sorted JSON lines, without `updated_at` (the only column that may differ).
    func readModel() async throws -> [String] {
        let rows = try await db.client.query(
            """
            SELECT 'subscription ' || (to_jsonb(s) - 'updated_at')::text FROM subscriptions s
            UNION ALL
            SELECT 'purchase ' || (to_jsonb(p) - 'updated_at')::text FROM purchases p
            ORDER BY 1
            """,
            logger: db.logger
        )
        var lines: [String] = []
        for try await line in rows.decode(String.self) { lines.append(line) }
        return lines
    }

    /// One subscription row's columns as JSON values.
    func subscription(_ originalTransactionID: String, environment: String = "Sandbox") async throws -> [String: Any]? {
        let rows = try await db.client.query(
            "SELECT to_jsonb(s)::text FROM subscriptions s WHERE environment = \(environment) AND original_transaction_id = \(originalTransactionID)",
            logger: db.logger
        )
        for try await text in rows.decode(String.self) {
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        }
        return nil
    }

    /// Counts events in a queue state.
    func count(_ state: QueueState) async throws -> Int {
        try await db.scalar("SELECT count(*) FROM event_queue WHERE state = \(state.rawValue)")
    }
}
