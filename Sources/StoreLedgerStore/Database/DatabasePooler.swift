import Foundation

/// What sits between StoreLedger and Postgres (`DATABASE_POOLER`), and so what a connection may rely on.
///
/// - `none` (``direct``, the default) and `session`: a connection is one server session for its whole life. The
///   append, claim and completion are named prepared statements, planned once per connection, and each connection
///   sets `plan_cache_mode = force_generic_plan` once, before its first transaction; the worker LISTENs on a
///   connection of its own pool.
/// - `transaction` (PgBouncer `pool_mode = transaction`): consecutive statements outside a transaction may reach
///   different server sessions, so nothing may live in a session. The same three statements go as unnamed
///   extended-protocol queries (same SQL, same binds; parsed and planned on each call), no session setting is
///   made, and the worker LISTENs only on `DATABASE_LISTEN_URL` (a direct connection), else polls.
///
/// No mode sends a startup parameter a pooler could refuse. A process reads the setting once and hands it, inside its
/// ``DatabaseSessions``, to what runs statements.
package enum DatabasePooler: String, Sendable, CaseIterable, CustomStringConvertible {
    /// A direct connection to Postgres (`DATABASE_POOLER=none`).
    case direct = "none"
    /// A session-pooling pooler (PgBouncer `pool_mode = session`): sessions are kept whole.
    case session
    /// A transaction-pooling pooler (PgBouncer `pool_mode = transaction`): only a transaction is kept whole.
    case transaction

    /// Parses a `DATABASE_POOLER` value (`none`, `session`, `transaction`; case-insensitive), throwing a
    /// ``StoreError`` that lists the accepted values.
    package init(configurationValue text: String) throws {
        guard let pooler = DatabasePooler(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw StoreError.configuration(
                "DATABASE_POOLER=\(text) is not one of \(Self.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        self = pooler
    }

    /// Whether a connection keeps one server session for its life, so named prepared statements, session
    /// settings and LISTEN work on it.
    package var keepsSessions: Bool { self != .transaction }

    /// The value's name.
    package var description: String { rawValue }
}
