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
    package static func subscriptionStates(
        _ keys: [SubscriptionKey], on connection: PostgresConnection, logger: Logger
    ) async throws -> [SubscriptionKey: Stored] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT k.i, f.state::text, s.environment IS NOT NULL
            FROM unnest(\(keys.map(\.environment.rawValue))::text[], \(keys.map(\.originalTransactionID.rawValue))::text[])
                WITH ORDINALITY AS k(environment, id, i)
            LEFT JOIN subscription_fold_states f ON f.environment = k.environment AND f.original_transaction_id = k.id
            LEFT JOIN subscriptions s ON s.environment = k.environment AND s.original_transaction_id = k.id
            """,
            logger: logger
        )
        let decoder = JSONDecoder()
        var stored: [SubscriptionKey: Stored] = [:]
        for try await (ordinal, json, hasRow) in rows.decode((Int64, String?, Bool).self) {
            let key = keys[Int(ordinal) - 1]
            var state = json.flatMap { try? decoder.decode(SubscriptionFoldState.self, from: Data($0.utf8)) }
            if state?.key != key { state = nil }
            stored[key] = Stored(state: state, hasRow: hasRow)
        }
        return stored
    }

    /// Stores fold states in one statement and removes, in one more, those of keys whose state is nil (their facts
    /// cannot be summarised exactly: every new fact refolds them from all facts).
    package static func write(
        _ states: [SubscriptionKey: SubscriptionFoldState?], on connection: PostgresConnection, logger: Logger
    ) async throws {
        let encoder = JSONEncoder()
        var kept: [(key: SubscriptionKey, json: String)] = []
        var dropped: [SubscriptionKey] = []
        for (key, state) in states {
            if let state {
                kept.append((key, String(decoding: try encoder.encode(state), as: UTF8.self)))
            } else {
                dropped.append(key)
            }
        }
        if !kept.isEmpty {
            try await connection.query(
                """
                INSERT INTO subscription_fold_states AS f (environment, original_transaction_id, state)
                SELECT environment, id, state::jsonb
                FROM unnest(\(kept.map(\.key.environment.rawValue))::text[], \(kept.map(\.key.originalTransactionID.rawValue))::text[],
                            \(kept.map(\.json))::text[]) AS i(environment, id, state)
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET state = excluded.state
                """,
                logger: logger
            )
        }
        if !dropped.isEmpty {
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
