import Foundation
package import Hummingbird
import Logging
import NIOCore
package import PostgresNIO
package import StoreLedgerStore

/// `GET /healthz` (the process is alive) and `GET /readyz` (the database answers, its schema is the one this build
/// expects, or, with `allowingAhead`, newer, and it accepts writes: ``DatabaseWritability``).
package struct HealthController: Sendable {
    /// The database to check.
    package let client: PostgresClient
    /// The migrations the schema must match.
    package let migrator: Migrator
    /// How long the readiness check may take.
    package let timeout: Duration
    /// Whether a schema ahead of this build is ready: for a process whose only write is the receiver's append.
    package let allowingAhead: Bool

    /// Creates the controller.
    package init(client: PostgresClient, migrator: Migrator, timeout: Duration = .seconds(2), allowingAhead: Bool = false) {
        self.client = client
        self.migrator = migrator
        self.timeout = timeout
        self.allowingAhead = allowingAhead
    }

    /// Adds `/healthz` and `/readyz` to `router`.
    package func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/healthz") { _, _ in Self.json(#"{"status":"ok"}"#) }
        router.get("/readyz") { _, context in
            do {
                try await withDeadline(timeout) { [client, migrator, allowingAhead, logger = context.logger] in
                    try await migrator.requireCurrent(client: client, logger: logger, allowingAhead: allowingAhead)
                    try await DatabaseWritability.requireWritable(client: client, logger: logger)
                }
                return Self.json(#"{"status":"ready"}"#)
            } catch let error as StoreError where error.code == .notWritable {
                throw APIError(.serviceUnavailable, code: "database_not_writable", message: error.detail)
            } catch let error as StoreError where error.code != .unavailable {
                throw APIError(.serviceUnavailable, code: "schema_not_current", message: error.detail)
            } catch {
                // Unreachable, or every connection closed (StoreError .unavailable, which says so), or no answer in time.
                context.logger.warning("not ready", metadata: ["error": "\(String(reflecting: error))"])
                let detail = (error as? StoreError)?.detail ?? "the database is not reachable"
                throw APIError(.serviceUnavailable, code: "database_unavailable", message: detail)
            }
        }
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
