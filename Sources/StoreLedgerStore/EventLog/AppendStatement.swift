import Crypto
import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore

/// The append inside a caller's transaction (the app-facing API's inline processing, reconciliation): inserts the
/// event and its pending queue row together (`storeledger_append_event`, migration 0015) and returns the event's id
/// and received time. A named prepared statement, planned once per connection, or the same SQL unnamed behind a
/// transaction pooler (``PostgresNIO/PostgresConnection/run(_:logger:)`` chooses). The receiver's standalone append
/// is ``CommittedAppendStatement``.
struct AppendStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_append_v3"

    /// The statement: `$1` source, `$2` environment hint, `$3` route, `$4` body, `$5` body SHA-256,
    /// `$6` remote address, `$7` content type, `$8` user agent, `$9` request id, `$10` user id.
    static let sql = "SELECT event_id, event_received_at FROM storeledger_append_event($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"

    /// The event's id and received time.
    typealias Row = (Int64, Date)

    /// The parameter types, so NULLs need no inference.
    static let bindingDataTypes: [PostgresDataType] = [.text, .text, .text, .bytea, .bytea, .text, .text, .text, .text, .text]

    /// The event to append.
    let event: NewEvent

    /// `$1`…`$10`; the digest is computed here, from the bytes that are stored.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(event.source.rawValue)
        bindings.append(event.environmentHint?.rawValue)
        bindings.append(event.route)
        bindings.append(event.body)
        bindings.append(ByteBuffer(bytes: SHA256.hash(data: event.body.readableBytesView)))
        bindings.append(event.remoteAddress)
        bindings.append(event.contentType)
        bindings.append(event.userAgent)
        bindings.append(event.requestID)
        bindings.append(event.userID)
        return bindings
    }

    /// Decodes the returned row.
    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

/// The receiver's append in one round trip that answers only after the commit: `CALL storeledger_append_committed`
/// (migration 0015) inserts, COMMITs, and only then returns the id, so its row cannot precede a failing or lost
/// commit. Runs outside any transaction block. Same bindings and row as ``AppendStatement``.
struct CommittedAppendStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_append_committed_v1"

    /// The statement; `$1`…`$10` as in ``AppendStatement``, then the two INOUT results.
    static let sql = "CALL storeledger_append_committed($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, NULL)"

    /// The event's id and received time.
    typealias Row = AppendStatement.Row

    /// The parameter types.
    static let bindingDataTypes = AppendStatement.bindingDataTypes

    /// The append whose bindings it sends.
    let append: AppendStatement

    /// `$1`…`$10`.
    func makeBindings() throws -> PostgresBindings { try append.makeBindings() }

    /// Decodes the returned row.
    func decodeRow(_ row: PostgresRow) throws -> Row { try append.decodeRow(row) }
}
