package import Foundation
package import Logging
package import PostgresNIO

/// The web console's users (`console_users`, migration 0015): a name, a role and a password hash (never the
/// password). `storeledger console-user create|list|delete` and the console's sign-in use it.
package struct ConsoleUserStore: Sendable {
    /// One user, without the hash.
    package struct User: Sendable, Equatable {
        /// The sign-in name.
        package var name: String
        /// What the user may do.
        package var role: ConsoleRole
        /// When the user was created.
        package var createdAt: Date
    }

    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// The start of the principal of a console session opened with `ADMIN_API_KEY`, which no user may take as a name.
    package static let adminKeyPrincipal = "admin-api-key"

    /// The principal of a console session opened with the admin key `key`: `admin-api-key:` and the start of the key's
    /// SHA-256, so that a session lives only while the process's key is still that one (a rotated or removed key ends
    /// the sessions it opened). No user name holds a `:`.
    package static func adminKeyPrincipal(for key: String) -> String {
        adminKeyPrincipal + ":" + String(SHA256Digest.hex(SHA256Digest.of(key)).prefix(16))
    }

    /// Whether `name` is acceptable as a user name: 1 to 64 of letters, digits, `.`, `_`, `@` and `-`, and not
    /// `admin-api-key` (the principal of the admin key's sessions: signing that user out would sign them out too).
    package static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._@-".contains($0)) }
            && name.lowercased() != adminKeyPrincipal
    }

    /// Creates user `name` with `role` and the password hash `passwordHash`; with `replace`, an existing user of that
    /// name gets the new role and hash and loses its sessions. Returns false when the user exists and `replace` is off.
    package func create(name: String, role: ConsoleRole, passwordHash: String, replace: Bool = false, logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            let inserted =
                try await connection.query(
                    """
                    INSERT INTO console_users (name, role, password_hash) VALUES (\(name), \(role.rawValue), \(passwordHash))
                    ON CONFLICT (name) DO NOTHING RETURNING name
                    """,
                    logger: logger
                ).readToEnd().isEmpty == false
            if inserted || !replace { return inserted }
            try await connection.query(
                "UPDATE console_users SET role = \(role.rawValue), password_hash = \(passwordHash), updated_at = now() WHERE name = \(name)",
                logger: logger
            ).readToEnd()
            try await connection.query("DELETE FROM console_sessions WHERE principal = \(name)", logger: logger).readToEnd()
            return true
        }
    }

    /// Every user, by name.
    package func list(logger: Logger) async throws -> [User] {
        try await client.rows("SELECT name, role, created_at FROM console_users ORDER BY name", logger: logger)
            .decode((String, String, Date).self)
            .map { User(name: $0.0, role: ConsoleRole(rawValue: $0.1) ?? .viewer, createdAt: $0.2) }
    }

    /// The role and password hash of user `name`, or nil when there is no such user.
    package func credentials(of name: String, logger: Logger) async throws -> (role: ConsoleRole, passwordHash: String)? {
        guard
            let (role, hash) = try await client.rows(
                "SELECT role, password_hash FROM console_users WHERE name = \(name)", logger: logger
            ).decode((String, String).self).first
        else { return nil }
        return (ConsoleRole(rawValue: role) ?? .viewer, hash)
    }

    /// Deletes user `name` and signs out its sessions; returns whether there was such a user.
    package func delete(name: String, logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            // The user first: a sign-in recording a session holds the user's row (FOR SHARE, ConsoleSessionStore.create),
            // so this waits for it to commit, and the sessions' delete, a statement later, sees that session too.
            let existed =
                try await connection.query("DELETE FROM console_users WHERE name = \(name) RETURNING name", logger: logger)
                .readToEnd().isEmpty == false
            try await connection.query("DELETE FROM console_sessions WHERE principal = \(name)", logger: logger).readToEnd()
            return existed
        }
    }
}
