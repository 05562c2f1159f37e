import Foundation
package import Logging
package import PostgresNIO

/// The endpoints outgoing webhooks go to (`storeledger webhooks add|list|remove`).
package struct WebhookEndpoints: Sendable {
    /// One endpoint.
    package struct Endpoint: Sendable, Equatable {
        /// Its id.
        package var id: Int64
        /// Where events are POSTed.
        package var url: String
        /// Whether it receives events.
        package var active: Bool
        /// Deliveries still pending.
        package var pending: Int
        /// Deliveries that failed for good.
        package var failed: Int
    }

    /// The database.
    package let client: PostgresClient

    /// Creates the helper.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// How long a rotated secret still signs deliveries beside the new one: a day.
    package static let rotationOverlapSeconds = 86_400

    /// Adds (or reactivates) an endpoint and returns its signing secret (`whsec_` + 32 random bytes, base64url); nil
    /// when the endpoint is already active and `rotatingSecret` is false (its consumer holds the secret it has; rotated,
    /// the old one signs beside the new for ``rotationOverlapSeconds``, so the consumer can switch unhurried). The
    /// scheme is stored in lower case (`HTTPS://…` is the same endpoint as `https://…`).
    package func add(url: String, rotatingSecret: Bool = false, logger: Logger) async throws -> String? {
        let url = try Self.normalized(url)
        var generator = SystemRandomNumberGenerator()
        let secret =
            "whsec_"
            + Data((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let written = try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO webhook_endpoints (url, secret) VALUES (\(url), \(secret))
                ON CONFLICT (url) DO UPDATE SET secret = excluded.secret, active = true,
                    previous_secret = CASE WHEN webhook_endpoints.active THEN webhook_endpoints.secret END,
                    previous_secret_expires_at = CASE WHEN webhook_endpoints.active THEN now() + make_interval(secs => \(Double(Self.rotationOverlapSeconds))) END
                WHERE NOT webhook_endpoints.active OR \(rotatingSecret)
                RETURNING 1
                """,
                logger: logger
            ).decode(Int.self).readToEnd().isEmpty == false
        }
        return written ? secret : nil
    }

    /// The endpoint's URL as stored: an http(s) URL with its scheme in lower case (`HTTPS://…` is `https://…`).
    static func normalized(_ url: String) throws -> String {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme), parsed.host != nil
        else {
            throw StoreError.configuration("\(url) is not an http(s) URL")
        }
        return scheme + url.dropFirst(scheme.count)
    }

    /// Deactivates the endpoint at `url` (any case of scheme; its history stays) and ends its pending deliveries as
    /// `failed` ("endpoint removed"): nothing more is sent there. Returns whether there was one.
    package func remove(url: String, logger: Logger) async throws -> Bool {
        let url = try Self.normalized(url)
        return try await client.inTransaction(logger: logger) { connection in
            let removed = try await connection.query(
                "UPDATE webhook_endpoints SET active = false WHERE url = \(url) AND active RETURNING id", logger: logger
            ).decode(Int64.self).readToEnd()
            guard !removed.isEmpty else { return false }
            try await connection.query(
                """
                UPDATE webhook_deliveries SET state = 'failed', last_error = \(WebhookDeliveryStore.endpointRemoved), last_status = NULL
                WHERE state = 'pending' AND endpoint_id = ANY(\(removed)::int8[])
                """,
                logger: logger
            ).readToEnd()
            return true
        }
    }

    /// Makes every `failed` delivery to the active endpoint at `url` due again now, with a new series of attempts (the
    /// attempt log keeps the old ones; numbers start again at 1): for a consumer that was down past the last attempt,
    /// once it is back. Returns how many deliveries it made due, or nil when no endpoint at `url` is active. Deliveries
    /// already pruned (`WEBHOOK_RETENTION_DAYS` after they failed) are gone.
    package func retryFailed(url: String, logger: Logger) async throws -> Int? {
        let url = try Self.normalized(url)
        return try await client.inTransaction(logger: logger) { connection in
            let rows = try await connection.query(
                """
                WITH endpoint AS (SELECT id FROM webhook_endpoints WHERE url = \(url) AND active),
                retried AS (
                    UPDATE webhook_deliveries d
                    SET state = 'pending', attempts = 0, next_attempt_at = now(), last_error = NULL, last_status = NULL
                    FROM endpoint e
                    WHERE d.endpoint_id = e.id AND d.state = 'failed'
                    RETURNING 1
                )
                SELECT (SELECT count(*) FROM endpoint), (SELECT count(*) FROM retried)
                """,
                logger: logger
            ).decode((Int, Int).self).readToEnd()
            guard let (endpoints, retried) = rows.first, endpoints > 0 else { return nil }
            return retried
        }
    }

    /// Every endpoint with its delivery backlog.
    package func list(logger: Logger) async throws -> [Endpoint] {
        var endpoints: [Endpoint] = []
        for (id, url, active, pending, failed) in try await client.rows(
            """
            SELECT e.id, e.url, e.active,
                   (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending'),
                   (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'failed')
            FROM webhook_endpoints e ORDER BY e.id
            """,
            logger: logger
        ).decode((Int64, String, Bool, Int, Int).self) {
            endpoints.append(Endpoint(id: id, url: url, active: active, pending: pending, failed: failed))
        }
        return endpoints
    }
}
