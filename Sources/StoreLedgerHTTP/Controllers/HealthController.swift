import Foundation
package import Hummingbird
import Logging
import NIOCore
package import PostgresNIO
package import StoreLedgerStore

/// `GET /healthz` (the process is alive) and `GET /readyz` (the database answers and its schema is
/// the one this build expects).
package struct HealthController: Sendable {
    /// The database to check.
    package let client: PostgresClient
    /// The migrations the schema must match.
    package let migrator: Migrator
    /// How long the readiness check may take.
    package let timeout: Duration

    /// Creates the controller.
    package init(client: PostgresClient, migrator: Migrator, timeout: Duration = .seconds(2)) {
        self.client = client
        self.migrator = migrator
        self.timeout = timeout
    }

    /// Adds `/healthz` and `/readyz` to `router`.
    package func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.get("/healthz") { _, _ in Self.json(#"{"status":"ok"}"#) }
        router.get("/readyz") { _, context in
            do {
                try await withDeadline(timeout) { [client, migrator, logger = context.logger] in
                    // Ahead is ready: taking receivers out of service on every migration would refuse Apple's
                    // notifications for the length of the rollout.
                    try await migrator.requireCurrent(client: client, logger: logger, allowingAhead: true)
                }
                return Self.json(#"{"status":"ready"}"#)
            } catch let error as StoreError {
                throw APIError(.serviceUnavailable, code: "schema_not_current", message: error.detail)
            } catch {
                context.logger.warning("not ready", metadata: ["error": "\(String(reflecting: error))"])
                throw APIError(.serviceUnavailable, code: "database_unavailable", message: "the database is not reachable")
            }
        }
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
