package import Logging
package import PostgresNIO

/// Whether this process's database sessions can store events at all: a check for readiness probes, which the schema
/// check alone passes on a database that reads but refuses every write.
package enum DatabaseWritability {
    /// Throws ``StoreError/Code/notWritable`` saying why when the session cannot write the event log: a hot standby
    /// (`pg_is_in_recovery()`, after a failover pointed at the wrong host), a read-only default
    /// (`default_transaction_read_only`, as some hosts set over a plan's limit), or a role without INSERT on `events`
    /// or `event_queue` (``StoreError/Code/unavailable`` when it did not answer). A full disk is not visible here: only a
    /// failing write shows it.
    package static func requireWritable(client: PostgresClient, logger: Logger) async throws {
        let rows = try await client.rows(
            """
            -- The privilege in lower case (PostgreSQL reads it either way): a read, as StoreLintTests sees it.
            SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on',
                   has_table_privilege('events', 'insert') AND has_table_privilege('event_queue', 'insert')
            """,
            logger: logger
        ).decode((Bool, Bool, Bool).self)
        guard let (standby, readOnly, mayInsert) = rows.first else {
            throw StoreError(.unavailable, "the database did not answer the writability check")
        }
        if standby {
            throw StoreError(.notWritable, "the database is a standby in recovery: it cannot store events (is DATABASE_URL the primary?)")
        }
        if readOnly {
            throw StoreError(.notWritable, "the database's sessions are read-only (default_transaction_read_only): it cannot store events")
        }
        if !mayInsert {
            throw StoreError(.notWritable, "this role may not INSERT into events and event_queue: it cannot store events")
        }
    }
}
