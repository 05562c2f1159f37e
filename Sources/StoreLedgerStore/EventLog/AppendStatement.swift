import Crypto
import Foundation
import NIOCore
import PostgresNIO
import StoreLedgerCore

/// The append: one statement for any number of events. Inserts each event and its pending queue row and returns,
/// per input in order, the event's id and received time. A named prepared statement, planned once per connection,
/// or the same SQL unnamed behind a transaction pooler (``DatabaseSessions/run(_:on:logger:)`` chooses).
///
/// Every column travels as one array (`unnest` turns them back into rows), so a batch of 64 costs one round trip
/// like a batch of one: the receiver's group commit (``GroupCommit``) depends on that.
struct AppendStatement: PostgresPreparedStatement {
    /// The statement's server-side name.
    static let name = "storeledger_append_v3"

    /// The statement: one array per column, `$1` sources, `$2` environment hints, `$3` routes, `$4` bodies,
    /// `$5` body SHA-256s, `$6` remote addresses, `$7` content types, `$8` user agents, `$9` request ids,
    /// `$10` user ids. Ids are drawn in input order (`storeledger_next_event_id`, which also notices a restored or
    /// promoted database); the rows come back in input order.
    static let sql = """
        WITH input AS MATERIALIZED (
            SELECT storeledger_next_event_id() AS id, i.*
            FROM unnest($1::text[], $2::text[], $3::text[], $4::bytea[], $5::bytea[],
                        $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
                 WITH ORDINALITY AS i(source, environment_hint, route, body, body_sha256,
                                      remote_address, content_type, user_agent, request_id, user_id, position)
        ), appended AS (
            INSERT INTO events (id, source, environment_hint, route, body, body_sha256,
                                remote_address, content_type, user_agent, request_id, user_id)
            SELECT id, source, environment_hint, route, body, body_sha256,
                   remote_address, content_type, user_agent, request_id, user_id
            FROM input ORDER BY position
            RETURNING id, received_at
        ), queued AS (
            INSERT INTO event_queue (event_id, event_received_at)
            SELECT id, received_at FROM appended
        )
        SELECT appended.id, appended.received_at
        FROM input JOIN appended USING (id)
        ORDER BY input.position
        """

    /// One event's id and received time.
    typealias Row = (Int64, Date)

    /// The parameter types, so empty and all-NULL arrays need no inference.
    static let bindingDataTypes: [PostgresDataType] = [
        .textArray, .textArray, .textArray, .byteaArray, .byteaArray, .textArray, .textArray, .textArray, .textArray, .textArray,
    ]

    /// The events to append, in the order their rows come back.
    let events: [NewEvent]

    /// `$1`…`$10`; each digest is computed here, from the bytes that are stored.
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 10)
        bindings.append(events.map(\.source.rawValue))
        bindings.append(NullableTextArray(events.map { $0.environmentHint?.rawValue }))
        bindings.append(NullableTextArray(events.map(\.route)))
        bindings.append(events.map(\.body))
        bindings.append(events.map { ByteBuffer(bytes: SHA256.hash(data: $0.body.readableBytesView)) })
        bindings.append(NullableTextArray(events.map(\.remoteAddress)))
        bindings.append(NullableTextArray(events.map(\.contentType)))
        bindings.append(NullableTextArray(events.map(\.userAgent)))
        bindings.append(NullableTextArray(events.map(\.requestID)))
        bindings.append(NullableTextArray(events.map(\.userID)))
        return bindings
    }

    /// Decodes one returned row.
    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
