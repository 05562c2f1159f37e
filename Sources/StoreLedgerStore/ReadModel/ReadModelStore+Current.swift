package import Logging
package import PostgresNIO
package import StoreLedgerCore

extension ReadModelStore {
    /// The stored states of these rows as far as a change is classified by them (``StoredRow/changeColumns``), for
    /// detecting what a new projection changes — or nil, in the same round trip, when no webhook endpoint is active
    /// (nothing to detect).
    package static func currentIfWebhooksActive<State: StoredRow>(
        _ keys: [State.Key], on connection: PostgresConnection, logger: Logger
    ) async throws -> [State.Key: State]? {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH hooks AS (SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE active) AS active)
            SELECT hooks.active, \(unescaped: State.changeColumns)
            FROM hooks LEFT JOIN (
                \(unescaped: State.table) r
                JOIN unnest(\(keys.map { State.columns(of: $0).environment })::text[], \(keys.map { State.columns(of: $0).id })::text[])
                  AS k(environment, id)
                  ON r.environment = k.environment AND r.\(unescaped: State.idColumn) = k.id
            ) ON hooks.active
            """,
            logger: logger
        )
        var active = false
        var states: [State.Key: State] = [:]
        for try await row in rows {
            let cells = Array(row)
            active = try cells[0].decode(Bool.self)
            guard active, let state = try State(changeColumns: cells[1...]) else { continue }
            states[state.key] = state
        }
        return active ? states : nil
    }
}
