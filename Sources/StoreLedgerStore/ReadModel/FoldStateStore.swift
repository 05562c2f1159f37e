import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Reads and writes `subscription_fold_states`: each subscription's ``SubscriptionFoldState`` (the winning evidence
/// of each column), which lets a new fact merge into its row without reading the row's facts. On the caller's
/// connection and transaction, under the rows' locks.
package enum FoldStateStore {
    /// What is stored for one subscription before its new facts merge.
    package struct Stored: Sendable {
        /// The fold state, if one is stored and decodes (a state this build cannot read counts as none).
        package var state: SubscriptionFoldState?
        /// Whether the subscription has a read-model row (a row without a state must be refolded from its facts;
        /// a subscription with neither has no facts before this batch's).
        package var hasRow: Bool
    }

    /// The stored fold state and whether a row exists, for each key, in one statement.
    ///
    /// With `cache`, a state held decoded under the version stored beside it is taken from the cache (the statement
    /// sends the versions held and returns a state's text only where the stored version differs), and states read are
    /// remembered there.
    package static func subscriptionStates(
        _ keys: [SubscriptionKey], cache: FoldStateCache? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws -> [SubscriptionKey: Stored] {
        guard !keys.isEmpty else { return [:] }
        let held = cache?.entries(keys) ?? [:]
        // Arrays carry no NULLs here: FoldStateCache.noVersion (made by no write) where no state is held.
        let rows = try await connection.query(
            """
            SELECT k.i, CASE WHEN f.state_version = k.held THEN NULL ELSE f.state::text END,
                   f.state_version, f.environment IS NOT NULL, s.environment IS NOT NULL
            FROM unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.originalTransactionID.rawValue))::text[],
                        \(keys.map { held[$0]?.version ?? FoldStateCache.noVersion })::uuid[])
                WITH ORDINALITY AS k(environment, id, held, i)
            LEFT JOIN subscription_fold_states f ON f.environment = k.environment AND f.original_transaction_id = k.id
            LEFT JOIN subscriptions s ON s.environment = k.environment AND s.original_transaction_id = k.id
            """,
            logger: logger
        )
        var stored: [SubscriptionKey: Stored] = [:]
        var read: [(key: SubscriptionKey, entry: FoldStateCache.Entry)] = []
        for try await (ordinal, json, version, hasState, hasRow) in rows.decode((Int64, String?, UUID?, Bool, Bool).self) {
            let key = keys[Int(ordinal) - 1]
            var state: SubscriptionFoldState?
            if let json {
                state = try? SubscriptionFoldState.decode(storedJSON: Data(json.utf8))
                if let version, let decoded = state, decoded.key == key { read.append((key, .init(version: version, state: decoded))) }
            } else if hasState {
                state = held[key]?.state  // the stored version is the one held
            }
            if state?.key != key { state = nil }
            stored[key] = Stored(state: state, hasRow: hasRow)
        }
        cache?.remember(read)
        return stored
    }

    /// Stores fold states in one statement, each under a new version (``FoldStateCache/newVersion()``), and removes, in
    /// one more, those of keys whose state is nil (their facts cannot be summarised exactly: every new fact refolds them
    /// from all facts). With `cache`, the states written are remembered there under their versions (if the transaction
    /// rolls back, the stored versions differ from those held, and the next read decodes the stored state).
    package static func write(
        _ states: [SubscriptionKey: SubscriptionFoldState?], cache: FoldStateCache? = nil, on connection: PostgresConnection, logger: Logger
    ) async throws {
        // Each state is copied once, into the cache entry the statement's values and the cache then share.
        var kept: [(key: SubscriptionKey, json: String, entry: FoldStateCache.Entry)] = []
        var dropped: [SubscriptionKey] = []
        for (key, state) in states {
            if let state {
                let json = try state.storedJSON ?? String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
                kept.append((key, json, FoldStateCache.Entry(version: FoldStateCache.newVersion(), state: state)))
            } else {
                dropped.append(key)
            }
        }
        if !kept.isEmpty {
            try await connection.query(
                """
                INSERT INTO subscription_fold_states AS f (environment, original_transaction_id, state, state_version)
                SELECT environment, id, state::jsonb, version
                FROM unnest(\(kept.map(\.key.environment.rawValue))::text[], \(kept.map(\.key.originalTransactionID.rawValue))::text[],
                            \(kept.map(\.json))::text[], \(kept.map(\.entry.version))::uuid[]) AS i(environment, id, state, version)
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET state = excluded.state, state_version = excluded.state_version
                """,
                logger: logger
            )
            cache?.remember(kept.map { ($0.key, $0.entry) })
        }
        if !dropped.isEmpty {
            cache?.forget(dropped)
            try await connection.query(
                """
                DELETE FROM subscription_fold_states f
                USING unnest(\(dropped.map(\.environment.rawValue))::text[], \(dropped.map(\.originalTransactionID.rawValue))::text[])
                    AS k(environment, id)
                WHERE f.environment = k.environment AND f.original_transaction_id = k.id
                """,
                logger: logger
            )
        }
    }
}
