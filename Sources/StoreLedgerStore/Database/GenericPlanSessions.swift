import Logging
import PostgresNIO
import Synchronization

/// Remembers which connections already run with `plan_cache_mode = force_generic_plan`, so each sets it once.
///
/// The setting used to be a startup parameter, which PgBouncer refuses (`unsupported startup parameter:
/// plan_cache_mode`). PostgresNIO has no hook for a new connection, so a connection sets it for its session before
/// its first transaction (``PostgresNIO/PostgresConnection/inTransaction(logger:isolation:_:)``, outside the
/// transaction, so that a rollback cannot undo it) or its first hot statement. Like the startup parameter, it then
/// applies to every parameterized statement of the session. Connections are held weakly: a closed connection drops
/// out, and a new one at the same address is not mistaken for it. Only used where sessions are kept whole
/// (``DatabasePooler/keepsSessions``): behind a transaction pooler a session `SET` would land on whichever server
/// session the statement happened to get, and stay there for other clients.
final class GenericPlanSessions: Sendable {
    /// The process's registry.
    static let shared = GenericPlanSessions()

    private struct Entry {
        weak var connection: PostgresConnection?
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// Sets `plan_cache_mode = force_generic_plan` on `connection` unless this process already did.
    func ensure(on connection: PostgresConnection, logger: Logger) async throws {
        let key = ObjectIdentifier(connection)
        let known = entries.withLock { $0[key]?.connection === connection }
        if known { return }
        // Named statements are planned once per connection; their generic plans are index-driven whatever the
        // batch (see ClaimStatement, CompleteStatement), while custom plans would be made on every call.
        try await connection.query("SET plan_cache_mode = force_generic_plan", logger: logger).readToEnd()
        entries.withLock { entries in
            entries = entries.filter { $0.value.connection != nil }
            entries[key] = Entry(connection: connection)
        }
    }
}
