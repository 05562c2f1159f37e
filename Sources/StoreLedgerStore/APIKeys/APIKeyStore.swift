import Crypto
import Foundation
package import Logging
package import PostgresNIO

/// Server-to-server API keys in `api_keys`, stored as SHA-256 digests: the key itself is shown once, at creation.
package struct APIKeyStore: Sendable {
    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// Creates a key named `name` and returns it (`sl_` + 43 base64url characters of 256 random bits), or nil when a key
    /// (revoked or not) already has that name; a session the key opens in the web console gets `consoleRole`.
    package func create(name: String, consoleRole: ConsoleRole = .viewer, logger: Logger) async throws -> String? {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let key =
            "sl_"
            + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let created = try await client.inTransaction(logger: logger) { connection in
            try await connection.query(
                """
                INSERT INTO api_keys (key_sha256, name, console_role) VALUES (\(Self.digest(key)), \(name), \(consoleRole.rawValue))
                ON CONFLICT (name) DO NOTHING RETURNING 1
                """,
                logger: logger
            ).decode(Int.self).readToEnd().isEmpty == false
        }
        return created ? key : nil
    }

    /// Whether `name` can name a key: 1 to 100 characters, no control characters, not only white space.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 100 && !name.trimmingCharacters(in: .whitespaces).isEmpty
            && !name.unicodeScalars.contains { CharacterSet.controlCharacters.contains($0) }
    }

    /// The name of the unrevoked key `key`, or nil.
    package func name(of key: String, logger: Logger) async throws -> String? {
        try await client.withOpenConnection(logger: logger) { connection in
            try await connection.query(
                "SELECT name FROM api_keys WHERE key_sha256 = \(Self.digest(key)) AND revoked_at IS NULL", logger: logger
            ).decode(String.self).firstAfterReadingAll()
        }
    }

    /// The name and web console role of the unrevoked key `key`, or nil.
    package func consoleAccess(of key: String, logger: Logger) async throws -> (name: String, role: ConsoleRole)? {
        let row = try await client.withOpenConnection(logger: logger) { connection in
            try await connection.query(
                "SELECT name, console_role FROM api_keys WHERE key_sha256 = \(Self.digest(key)) AND revoked_at IS NULL", logger: logger
            ).decode((String, String).self).firstAfterReadingAll()
        }
        guard let (name, role) = row else { return nil }
        return (name, ConsoleRole(rawValue: role) ?? .viewer)
    }

    /// Revokes the key named `name` and signs out the web console sessions it opened (principal `api-key:NAME`, in
    /// the same transaction); returns whether one was revoked.
    package func revoke(name: String, logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            let revoked =
                try await connection.query(
                    "UPDATE api_keys SET revoked_at = now() WHERE name = \(name) AND revoked_at IS NULL RETURNING name", logger: logger
                ).readToEnd().isEmpty == false
            // Whether revoked now or before (a session of a key revoked by an earlier version may remain).
            try await connection.query("DELETE FROM console_sessions WHERE principal = \(Self.consolePrincipal(name))", logger: logger)
                .readToEnd()
            return revoked
        }
    }

    /// The principal of a web console session the key named `name` opened: `api-key:NAME` (console user names
    /// cannot contain a colon, so it names no user).
    package static func consolePrincipal(_ name: String) -> String {
        "api-key:\(name)"
    }

    /// SHA-256 of the key's UTF-8 bytes.
    static func digest(_ key: String) -> Data {
        Data(SHA256.hash(data: Data(key.utf8)))
    }
}
