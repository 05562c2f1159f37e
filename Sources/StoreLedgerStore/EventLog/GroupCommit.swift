import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// Group commit for the event log: appends that arrive while earlier ones are being committed share the next
/// transaction (one multi-row ``AppendStatement``, one checked `COMMIT`, one WAL flush), and every caller of the
/// batch is answered only after that `COMMIT` answered `COMMIT`.
///
/// There is no timer and no background task waiting for company: while fewer than `concurrentCommits` transactions
/// are in flight, an append starts its own at once (alone, when the receiver is idle, so latency stays that of one
/// transaction); once that many are in flight, appends queue and the next transaction to finish takes the whole
/// queue (up to `maxBatchEvents` events or `maxBatchBytes` of bodies) as its next batch. Under load the batches
/// grow by themselves and the transactions per notification fall.
///
/// A batch that the database refused as a whole — a statement error (a value one event carries, such as a NUL byte
/// in a header) or a `COMMIT` answered `ROLLBACK` (a deferred constraint) — is known not to have committed, so each
/// of its events is tried again in a transaction of its own: one bad input never costs the others their
/// acknowledgement. Any other failure (the connection lost, mid-`COMMIT` perhaps) is every caller's error: the
/// receiver answers 503 and Apple retries, and a retry of a notification that did commit is a duplicate the ledger
/// already absorbs. So is a transaction that does not finish within `commitTimeout` (a connection left hanging by a
/// database crash): its callers get the error and its slot is freed for the next batch, instead of holding the slot,
/// and with it every later caller, for as long as the connection hangs.
///
/// A caller that stops waiting (its task cancelled: the receiver's store deadline answered 503) leaves the queue at
/// once, unless a transaction already took its event, so a database that hangs does not hold every later request's body
/// in memory; and while the bodies queued exceed `maxWaitingBytes`, a new append is refused at once (the receiver
/// answers 503, and Apple retries later) instead of queueing behind them.
final class GroupCommit: Sendable {
    /// One caller waiting for its event's commit.
    private struct Waiter: Sendable {
        /// Tells waiters apart, so that a cancelled caller finds its own.
        let id: UInt64
        /// The event to append.
        let event: NewEvent
        /// Resumed with the event's id once its transaction committed, or with the error.
        let continuation: CheckedContinuation<AppendedEvent, any Error>
    }

    /// The waiting callers and the transactions in flight.
    private struct State {
        /// Callers whose events no transaction has taken yet, in arrival order.
        var waiting: [Waiter] = []
        /// The body bytes of `waiting`.
        var waitingBytes = 0
        /// Transactions in flight.
        var committing = 0
        /// The last waiter id handed out.
        var lastID: UInt64 = 0
    }

    /// Where batches are committed.
    private let client: PostgresClient
    /// How the batches' statements reach Postgres.
    private let sessions: DatabaseSessions
    /// How many transactions may be in flight at once (each holds one pooled connection).
    let concurrentCommits: Int
    /// The most events one transaction takes.
    let maxBatchEvents: Int
    /// The most body bytes one transaction takes (a batch always takes at least one event).
    let maxBatchBytes: Int
    /// How long one transaction may take before its callers are answered with an error and its slot is freed.
    let commitTimeout: Duration
    /// The most body bytes that may wait for a transaction; an append beyond it is refused at once.
    let maxWaitingBytes: Int
    /// The waiting callers and the transactions in flight.
    private let state = Mutex(State())

    /// Creates a group commit over `client`.
    init(
        client: PostgresClient, sessions: DatabaseSessions, concurrentCommits: Int, maxBatchEvents: Int = 128, maxBatchBytes: Int = 8 << 20,
        commitTimeout: Duration = EventLog.defaultCommitTimeout, maxWaitingBytes: Int = EventLog.defaultMaxWaitingBytes
    ) {
        precondition(concurrentCommits >= 1 && maxBatchEvents >= 1)
        self.commitTimeout = commitTimeout
        self.maxWaitingBytes = maxWaitingBytes
        self.client = client
        self.sessions = sessions
        self.concurrentCommits = concurrentCommits
        self.maxBatchEvents = maxBatchEvents
        self.maxBatchBytes = maxBatchBytes
    }

    /// How many appends wait for a transaction to take them.
    var waitingCount: Int { state.withLock { $0.waiting.count } }

    /// Appends `event` in the next transaction and returns once that transaction committed. Throws
    /// `CancellationError` when the caller is cancelled before a transaction took the event (it is then not appended),
    /// and ``StoreError/Code/unavailable`` when more than `maxWaitingBytes` already wait.
    func append(_ event: NewEvent, logger: Logger) async throws -> AppendedEvent {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        let size = event.body.readableBytes
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Start {
                    case waits
                    case commits([Waiter])
                    case cancelled, full
                }
                // The cancellation flag is set before the handler below runs: checked under the lock, either this sees it
                // or the handler finds the waiter queued.
                let start = state.withLock { state -> Start in
                    if Task.isCancelled { return .cancelled }
                    if !state.waiting.isEmpty && state.waitingBytes + size > maxWaitingBytes { return .full }
                    state.waiting.append(Waiter(id: id, event: event, continuation: continuation))
                    state.waitingBytes += size
                    guard state.committing < concurrentCommits else { return .waits }
                    state.committing += 1
                    return .commits(takeBatch(from: &state))
                }
                switch start {
                case .waits: break
                case .commits(let batch):
                    // A task of its own: the callers wait on their continuations, the commits run until the queue is empty.
                    Task { await self.commitUntilEmpty(startingWith: batch, logger: logger) }
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .full:
                    continuation.resume(
                        throwing: StoreError(.unavailable, "more than \(maxWaitingBytes) bytes of appends already wait for the database"))
                }
            }
        } onCancel: {
            let abandoned = state.withLock { state -> Waiter? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                state.waitingBytes -= state.waiting[index].event.body.readableBytes
                return state.waiting.remove(at: index)
            }
            abandoned?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Commits `batch`, then the queue's next batch, until the queue is empty. `logger` is the request's that started
    /// the loop: each batch logs under its own requests' ids instead (`request_id`, comma-separated), not that one's.
    private func commitUntilEmpty(startingWith batch: [Waiter], logger: Logger) async {
        var batch = batch
        while !batch.isEmpty {
            var logger = logger
            logger[metadataKey: "hb.request.id"] = nil
            let ids = batch.compactMap(\.event.requestID)
            logger[metadataKey: "request_id"] = ids.isEmpty ? nil : .string(ids.joined(separator: ","))
            await commit(batch, logger: logger)
            batch = state.withLock { state in
                if state.waiting.isEmpty { state.committing -= 1 }
                return takeBatch(from: &state)
            }
        }
    }

    /// Takes the oldest waiters that fit in one batch.
    private func takeBatch(from state: inout State) -> [Waiter] {
        var count = 0
        var bytes = 0
        for waiter in state.waiting {
            let size = waiter.event.body.readableBytes
            guard count < maxBatchEvents, count == 0 || bytes + size <= maxBatchBytes else { break }
            count += 1
            bytes += size
        }
        let batch = Array(state.waiting.prefix(count))
        state.waiting.removeFirst(count)
        state.waitingBytes -= bytes
        return batch
    }

    /// Commits one batch and answers its callers; never throws.
    private func commit(_ batch: [Waiter], logger: Logger) async {
        do {
            let appended = try await insert(batch.map(\.event), logger: logger)
            for (waiter, event) in zip(batch, appended) { waiter.continuation.resume(returning: event) }
        } catch  where batch.count > 1 && Self.refusedForOneEvent(error) {
            logger.warning(
                "the database refused a batch of appends; committing its events one by one",
                metadata: [
                    "events": "\(batch.count)", "error": "\(String(reflecting: error))",
                ])
            for waiter in batch {
                do {
                    waiter.continuation.resume(returning: try await insert([waiter.event], logger: logger)[0])
                } catch {
                    waiter.continuation.resume(throwing: error)
                }
            }
        } catch {
            for waiter in batch { waiter.continuation.resume(throwing: error) }
        }
    }

    /// Appends `events` in one transaction and returns their ids in order, once `COMMIT` answered `COMMIT`.
    /// A transaction still running after ``commitTimeout`` is left behind: the callers get ``DeadlineExceeded``.
    private func insert(_ events: [NewEvent], logger: Logger) async throws -> [AppendedEvent] {
        try await withDeadline(commitTimeout) { [client, sessions] in
            try await client.inTransaction(logger: logger, sessions: sessions) { connection in
                try await EventLog.append(events, on: connection, sessions: sessions, logger: logger)
            }
        }
    }

    /// Whether `error` says the database refused the transaction (so nothing of it committed) for what one of its
    /// events may carry — a value it cannot store (a NUL byte in a header), a constraint or a trigger's check failing
    /// at `COMMIT` — so that each event is worth trying alone. Not the connection or the session failing with its fate
    /// unknown (``PostgresNIO/PSQLError/endsSession``), and not a refusal every event would meet again: a statement or
    /// lock timeout, a read-only server, resources exhausted, a schema the statement does not fit (trying 128 events
    /// one by one would hold the commit slot for each, for callers already answered).
    static func refusedForOneEvent(_ error: any Error) -> Bool {
        if let error = error as? StoreError { return error.code == .notCommitted }
        guard let error = error as? PSQLError, !error.endsSession else { return false }
        let state = error.serverInfo?[.sqlState] ?? ""
        return !(Self.everyEventsRefusals.contains(state) || Self.everyEventsRefusalClasses.contains(String(state.prefix(2))))
    }

    /// Refusals no event causes by itself: a statement timeout or cancel, a lock not granted in time, an object in use.
    private static let everyEventsRefusals: Set<String> = ["57014", "55P03", "55006"]
    /// Classes of them: insufficient resources (53), a read-only transaction (25), the schema (42), unsupported (0A).
    private static let everyEventsRefusalClasses: Set<String> = ["53", "25", "42", "0A"]
}
