import Crypto
package import Foundation
package import Logging
package import PostgresNIO

/// The web console's sessions (`console_sessions`, migration 0015). The browser holds a random token; the table holds
/// only its SHA-256, the principal, the role and when it expires.
package struct ConsoleSessionStore: Sendable {
    /// A live session.
    package struct Session: Sendable, Equatable {
        /// Who signed in: a console user's name, `api-key:NAME` or `admin-api-key:` and the start of the key's SHA-256.
        package var principal: String
        /// What the session may do.
        package var role: ConsoleRole
        /// When it stops being accepted.
        package var expiresAt: Date
    }

    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Records a session for `token` (only its SHA-256 is stored) lasting `lifetime` seconds, and removes expired ones.
    ///
    /// With `verifiedPasswordHash` (a console user's sign-in), the session is recorded only while the user still has
    /// that hash and `role`: a sign-in hashes its password for hundreds of milliseconds, and `console-user delete` or
    /// `--replace` (a leaked password rotated, a role lowered), which ends the user's sessions, may run meanwhile. The
    /// user's row is held (`FOR SHARE`) until the session commits: a replace or delete that changes it waits, then
    /// deletes the sessions it can now see, this one included; one that committed first leaves no matching row.
    /// Returns whether the session was recorded.
    @discardableResult
    package func create(
        token: String, principal: String, role: ConsoleRole, lifetime: TimeInterval, verifiedPasswordHash: String? = nil, logger: Logger
    ) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query("DELETE FROM console_sessions WHERE expires_at <= now()", logger: logger).readToEnd()
            return try await connection.query(
                """
                INSERT INTO console_sessions (token_sha256, principal, role, expires_at)
                SELECT \(Self.digest(token)), \(principal), \(role.rawValue), now() + make_interval(secs => \(lifetime))
                WHERE \(verifiedPasswordHash)::text IS NULL
                   OR EXISTS (SELECT 1 FROM console_users u
                              WHERE u.name = \(principal) AND u.password_hash = \(verifiedPasswordHash) AND u.role = \(role.rawValue)
                              FOR SHARE)
                RETURNING 1
                """,
                logger: logger
            ).readToEnd().isEmpty == false
        }
    }

    /// The unexpired session whose token is `token`, or nil; a session an API key opened lives only while the key is
    /// not revoked (whatever raced the revocation: a sign-in that checked the key just before it), and one the admin key
    /// opened only while `adminKeyPrincipal` (``ConsoleUserStore/adminKeyPrincipal(for:)`` of the process's
    /// `ADMIN_API_KEY`, nil without one) is still its principal.
    package func session(token: String, adminKeyPrincipal: String? = nil, logger: Logger) async throws -> Session? {
        let keyPrefix = APIKeyStore.consolePrincipal("")
        guard
            let (principal, role, expires) = try await client.rows(
                """
                SELECT s.principal, s.role, s.expires_at FROM console_sessions s
                WHERE s.token_sha256 = \(Self.digest(token)) AND s.expires_at > now()
                  AND (NOT starts_with(s.principal, \(keyPrefix))
                       OR EXISTS (SELECT 1 FROM api_keys k WHERE \(keyPrefix) || k.name = s.principal AND k.revoked_at IS NULL))
                  AND (NOT (s.principal = \(ConsoleUserStore.adminKeyPrincipal)
                            OR starts_with(s.principal, \(ConsoleUserStore.adminKeyPrincipal + ":")))
                       OR s.principal = \(adminKeyPrincipal ?? ""))
                """,
                logger: logger
            ).decode((String, String, Date).self).first
        else { return nil }
        return Session(principal: principal, role: ConsoleRole(rawValue: role) ?? .viewer, expiresAt: expires)
    }

    /// Ends the session whose token is `token` (signing out); returns whether there was one.
    @discardableResult
    package func delete(token: String, logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM console_sessions WHERE token_sha256 = \(Self.digest(token)) RETURNING principal", logger: logger
            ).readToEnd().isEmpty == false
        }
    }

    /// SHA-256 of the token's UTF-8 bytes, as stored.
    package static func digest(_ token: String) -> Data {
        Data(SHA256.hash(data: Data(token.utf8)))
    }
}
