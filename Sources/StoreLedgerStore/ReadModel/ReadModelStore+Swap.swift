package import Logging
package import PostgresNIO
import StoreLedgerCore

extension ReadModelStore {
    /// The rows of `State`'s table that the rebuild's shadow (schema `shadow`) would change, as their change columns
    /// tell them (``StoredRow/changeColumns``): the live row (nil when added) and the shadow's (nil when removed) — or
    /// nil, in the same round trip, when no webhook endpoint is active (nothing to announce). Run it in the swap's
    /// transaction, after the live tables were locked and before the merge.
    package static func swapChangesIfWebhooksActive<State: StoredRow>(
        _: State.Type, shadow: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> [(old: State?, new: State?)]? {
        let rows = try await connection.query(
            """
            WITH hooks AS (SELECT EXISTS (SELECT 1 FROM public.webhook_endpoints WHERE active) AS active),
                 l AS (SELECT \(unescaped: State.changeColumns) FROM public.\(unescaped: State.table) r WHERE (SELECT active FROM hooks)),
                 s AS (SELECT \(unescaped: State.changeColumns) FROM \(unescaped: shadow).\(unescaped: State.table) r
                       WHERE (SELECT active FROM hooks))
            SELECT hooks.active, d.*
            FROM hooks LEFT JOIN (
                SELECT l.*, s.* FROM l FULL JOIN s ON l.environment = s.environment AND l.\(unescaped: State.idColumn) = s.\(unescaped: State.idColumn)
                WHERE ROW(l.*) IS DISTINCT FROM ROW(s.*)
            ) d ON hooks.active
            """,
            logger: logger
        )
        var active = false
        var changes: [(old: State?, new: State?)] = []
        for try await row in rows {
            let cells = Array(row)
            active = try cells[0].decode(Bool.self)
            let width = (cells.count - 1) / 2
            guard active, width > 0 else { continue }
            let old = try State(changeColumns: cells[1...width])
            let new = try State(changeColumns: cells[(1 + width)...])
            if old != nil || new != nil { changes.append((old, new)) }
        }
        return active ? changes : nil
    }
}
