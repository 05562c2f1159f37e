package import Foundation
package import Logging
package import PostgresNIO

/// How far the reconciler has asked Apple for every notification, per app and environment (`reconciliation_coverage`,
/// migration 0038): where each next window starts, shared by every worker and kept across restarts. It only moves
/// forward.
package struct ReconciliationCoverage: Sendable {
    /// One app in one environment.
    package struct Scope: Hashable, Sendable {
        /// The app's bundle id.
        package var bundleID: String
        /// The environment (`Production`, `Sandbox`).
        package var environment: String

        /// Creates a scope.
        package init(bundleID: String, environment: String) {
            self.bundleID = bundleID
            self.environment = environment
        }
    }

    /// The database.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// The end of the last window asked successfully, per scope that has one.
    package func coveredUntil(logger: Logger) async throws -> [Scope: Date] {
        let rows = try await client.rows("SELECT bundle_id, environment, covered_until FROM reconciliation_coverage", logger: logger)
            .decode((String, String, Date).self)
        return Dictionary(rows.map { (Scope(bundleID: $0.0, environment: $0.1), $0.2) }, uniquingKeysWith: max)
    }

    /// Records that every notification of each of `scopes` was asked for up to `date` (a later record stays).
    package func record(_ scopes: [Scope], until date: Date, logger: Logger) async throws {
        guard !scopes.isEmpty else { return }
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO reconciliation_coverage (bundle_id, environment, covered_until)
                SELECT s.bundle_id, s.environment, \(date)::timestamptz
                FROM unnest(\(scopes.map(\.bundleID))::text[], \(scopes.map(\.environment))::text[]) AS s(bundle_id, environment)
                ON CONFLICT (bundle_id, environment) DO UPDATE
                SET covered_until = greatest(reconciliation_coverage.covered_until, excluded.covered_until), updated_at = now()
                """,
                logger: logger
            ).readToEnd()
        }
    }
}
