import Crypto
import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore

/// The append: the receiver's one statement per request. Inserts the event and its pending queue row together and
/// returns the event's id and received time. A named prepared statement, planned once per connection, or the same
/// SQL unnamed behind a transaction pooler (``DatabaseSessions/run(_:on:logger:)`` chooses).
struct AppendStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_append_v2"

    /// The statement: `$1` source, `$2` environment hint, `$3` route, `$4` body, `$5` body SHA-256,
    /// `$6` remote address, `$7` content type, `$8` user agent, `$9` request id, `$10` user id.
    static let sql = """
        WITH appended AS (
            INSERT INTO events (source, environment_hint, route, body, body_sha256,
                                remote_address, content_type, user_agent, request_id, user_id)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            RETURNING id, received_at
        )
        INSERT INTO event_queue (event_id, event_received_at)
        SELECT id, received_at FROM appended
        RETURNING event_id, event_received_at
        """

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
