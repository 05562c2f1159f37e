import Foundation
package import Logging
package import PostgresNIO
package import StoreLedgerCore

/// Who owns which purchase: `user_links` (current owner) and `user_link_history` (every link and transfer).
///
/// Policy (as RevenueCat's default): the latest authenticated claimant owns a purchase, so a restore on a new
/// account transfers it; the transfer is recorded with the event that caused it.
package enum UserLinkStore {
    /// Links the purchase `(environment, originalTransactionID)` to `user` because of `eventID`, transferring it
    /// from its current owner if that is someone else. Runs in the caller's transaction; the row lock makes
    /// concurrent claims serialize.
    package static func link(
        environment: String, originalTransactionID: String, to user: UserID, appAccountToken: String?,
        eventID: EventID, reason: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> UserLinkChange {
        var previous: String?
        let current = try await connection.query(
            """
            SELECT user_id FROM user_links
            WHERE environment = \(environment) AND original_transaction_id = \(originalTransactionID)
            FOR UPDATE
            """,
            logger: logger
        )
        for try await owner in current.decode(String.self) { previous = owner }
        if previous == user.rawValue { return .unchanged }
        try await connection.query(
            """
            INSERT INTO user_links (environment, original_transaction_id, user_id, app_account_token, event_id)
            VALUES (\(environment), \(originalTransactionID), \(user.rawValue), \(appAccountToken), \(eventID.rawValue))
            ON CONFLICT (environment, original_transaction_id) DO UPDATE
            SET user_id = excluded.user_id, app_account_token = coalesce(excluded.app_account_token, user_links.app_account_token),
                event_id = excluded.event_id, linked_at = now()
            """,
            logger: logger
        )
        let change: UserLinkChange = previous.map { .transferred(from: UserID($0)) } ?? .linked
        let kind = previous == nil ? "linked" : "transferred"
        try await connection.query(
            """
            INSERT INTO user_link_history (environment, original_transaction_id, from_user_id, to_user_id, change, reason, event_id)
            VALUES (\(environment), \(originalTransactionID), \(previous), \(user.rawValue), \(kind), \(reason), \(eventID.rawValue))
            """,
            logger: logger
        )
        if case .transferred(let from) = change {
            logger.notice(
                "purchase transferred between users",
                metadata: ["original_transaction_id": "\(originalTransactionID)", "from": "\(from)", "to": "\(user)", "event": "\(eventID)"]
            )
        }
        return change
    }

    /// The owner of an appAccountToken (lower-cased before lookup), if known.
    package static func owner(ofToken token: String, on connection: PostgresConnection, logger: Logger) async throws -> UserID? {
        let rows = try await connection.query(
            "SELECT user_id FROM app_account_tokens WHERE app_account_token = \(token.lowercased())", logger: logger
        )
        return try await rows.decode(String.self).firstAfterReadingAll().map(UserID.init)
    }

    /// The lock of app account token claims: a claim holds it exclusively until it commits, and webhook events carrying
    /// a token take it shared before they read the token's owner (``waitForTokenClaims(on:logger:)``). One lock for
    /// every token, not one each, so that a batch of events adds one lock to its transaction, not one per token
    /// (PostgreSQL's lock table is shared and bounded); first claims are rare, and brief.
    package static let tokenClaimsLockKey = "app-account-token-claims"

    /// Waits for the token claims in progress to commit (``tokenClaimsLockKey``, shared), so that a statement after it
    /// reads the owners they record.
    package static func waitForTokenClaims(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock_shared(hashtextextended(\(tokenClaimsLockKey), 0))", logger: logger)
            .readToEnd()
    }

    /// Records that `token` belongs to `user` unless it already has an owner; returns the owner it has now, and whether
    /// this call made it theirs (false when it had an owner, `user` included, before). Takes the claims' lock first (a
    /// statement of its own), so a concurrent claim's row is seen once it commits.
    @discardableResult
    package static func claimToken(
        _ token: String, for user: UserID, origin: String, on connection: PostgresConnection, logger: Logger
    ) async throws -> (owner: UserID, claimed: Bool) {
        try await ReadModelStore.lock([tokenClaimsLockKey], on: connection, logger: logger)
        let rows = try await connection.query(
            """
            WITH claimed AS (
                INSERT INTO app_account_tokens (app_account_token, user_id, origin)
                VALUES (\(token.lowercased()), \(user.rawValue), \(origin))
                ON CONFLICT (app_account_token) DO NOTHING
                RETURNING user_id
            )
            SELECT user_id, true FROM claimed
            UNION ALL
            SELECT user_id, false FROM app_account_tokens WHERE app_account_token = \(token.lowercased())
            LIMIT 1
            """,
            logger: logger
        )
        if let (owner, claimed) = try await rows.decode((String, Bool).self).firstAfterReadingAll() { return (UserID(owner), claimed) }
        // A claim by someone who did not take the lock, committed while the insert waited: its row is newer than the
        // statement's snapshot, so read it in a statement of its own.
        return (try await Self.owner(ofToken: token, on: connection, logger: logger) ?? user, false)
    }

    /// The link history of a purchase, oldest first: (from, to, change, event id).
    package static func history(
        environment: String, originalTransactionID: String, client: PostgresClient, logger: Logger
    ) async throws -> [(from: UserID?, to: UserID, change: String, eventID: EventID)] {
        let rows = try await client.rows(
            """
            SELECT from_user_id, to_user_id, change, event_id FROM user_link_history
            WHERE environment = \(environment) AND original_transaction_id = \(originalTransactionID)
            ORDER BY id
            """,
            logger: logger
        )
        var history: [(from: UserID?, to: UserID, change: String, eventID: EventID)] = []
        for (from, to, change, eventID) in try rows.decode((String?, String, String, Int64).self) {
            history.append((from.map(UserID.init), UserID(to), change, EventID(eventID)))
        }
        return history
    }
}
