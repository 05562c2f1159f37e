package import Logging
package import PostgresNIO
package import StoreLedgerStore

/// Runs the ledger handler on one input while its caller waits (the app-facing API), through the same path as
/// the worker: the event is appended to the log, leased, verified, its facts recorded and projected, and its
/// outcome completed — all in one transaction, so the caller's answer and the ledger can never disagree.
///
/// An input that can never verify is still committed (the log keeps every input) as `rejected`; one whose
/// verification may pass later stays `pending` for the workers.
package struct InlineProcessor: Sendable {
    /// Where events are appended and processed.
    package let client: PostgresClient
    /// The handler every input goes through.
    package let handler: LedgerHandler
    /// The lease owner recorded for inline processing: `inline` unless given (the `storeledger` command gives
    /// `inline:<host>:<pid>`, so an operator can tell which process held a lease).
    package let owner: String
    /// Reschedules inputs whose verification failed for a reason that may pass.
    package let retryPolicy: RetryPolicy
    /// How the append and completion reach Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions

    /// Creates a processor (`sessions` default: a direct connection).
    package init(
        client: PostgresClient, handler: LedgerHandler, owner: String = "inline", retryPolicy: RetryPolicy = RetryPolicy(),
        sessions: DatabaseSessions = DatabaseSessions()
    ) {
        self.client = client
        self.sessions = sessions
        self.handler = handler
        self.owner = owner
        self.retryPolicy = retryPolicy
    }

    /// How long an event processed inline is leased, and the longest the server lets its transaction wait.
    static let lease: Duration = .seconds(60)

    /// Appends `event`, processes it, then runs `body` with the prepared event and its outcome in the same
    /// transaction (to link the purchase to a user, say) and commits. Throws (and commits nothing) on database
    /// errors, so the caller answers 5xx and nothing was accepted; at once, with ``StoreError/Code/rebuildSwapping``,
    /// while a rebuild's swap holds the read model (``ShadowSchema/refuseWhileSwapping(on:logger:)``).
    package func process<Result: Sendable>(
        _ event: NewEvent,
        logger: Logger,
        then body: @Sendable (PreparedEvent, EventOutcome, PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.inTransaction(logger: logger, sessions: sessions, limits: TransactionLimits(lease: Self.lease)) { connection in
            try await ShadowSchema.refuseWhileSwapping(on: connection, logger: logger)
            let appended = try await EventLog.append(event, on: connection, sessions: sessions, logger: logger)
            let claimed = try await EventQueue.leaseAppended(appended, event, owner: owner, lease: Self.lease, on: connection, logger: logger)
            let prepared = await handler.prepare(claimed, logger: logger)
            let outcome = try await handler.apply([prepared], in: connection, logger: logger).first ?? .retry(reason: "no outcome")
            try await EventQueue.complete([(claimed, outcome)], owner: owner, policy: retryPolicy, on: connection, sessions: sessions, logger: logger)
            return try await body(prepared, outcome, connection)
        }
    }
}
