import Synchronization

/// Thrown by ``withDeadline(_:operation:)`` when the operation did not finish in time.
package struct DeadlineExceeded: Error, CustomStringConvertible {
    /// How long the operation was given.
    package let limit: Duration
    /// Creates the error for an operation given `limit`.
    package init(limit: Duration) { self.limit = limit }
    /// Says the limit.
    package var description: String { "did not finish within \(limit)" }
}

/// Runs `operation` and returns its result, or throws ``DeadlineExceeded`` once `limit` has passed — whatever the
/// operation is waiting for.
///
/// A task group cannot do this: it waits for every child, and a query blocked in the database (a lock, a pool with no
/// connection to give, a peer that vanished without closing its socket) does not answer cancellation. So the operation
/// runs in a task of its own that is cancelled, not awaited, when the time is up; it finishes or fails by itself
/// later, and its result is dropped. Callers must treat a timed-out write as "perhaps done" (the receiver answers 503:
/// Apple's retry of a notification that did commit is a duplicate the ledger already absorbs). Cancelling the caller
/// cancels the operation and returns at once too.
package func withDeadline<Result: Sendable>(
    _ limit: Duration,
    operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = DeadlineRace<Result>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let work = Task {
                do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled { race.finish(.failure(DeadlineExceeded(limit: limit))) }
            }
            race.start(continuation, work: work, timer: timer)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The state of one ``withDeadline(_:operation:)``: whichever of result, timer and cancellation comes first resumes
/// the caller and cancels the other tasks; the rest are ignored.
private final class DeadlineRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var early: Swift.Result<Result, any Error>?
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
        var finished = false
    }
    private let state = Mutex(State())

    /// Hands over the continuation and the tasks; resumes at once when an outcome arrived first.
    func start(_ continuation: CheckedContinuation<Result, any Error>, work: Task<Void, Never>, timer: Task<Void, Never>) {
        let early = state.withLock { state -> Swift.Result<Result, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            state.work = work
            state.timer = timer
            return nil
        }
        if let early {
            work.cancel()
            timer.cancel()
            continuation.resume(with: early)
        }
    }

    /// Delivers the first outcome; later ones do nothing.
    func finish(_ outcome: Swift.Result<Result, any Error>) {
        let resumed = state.withLock { state -> (CheckedContinuation<Result, any Error>, Task<Void, Never>?, Task<Void, Never>?)? in
            guard !state.finished else { return nil }
            state.finished = true
            guard let continuation = state.continuation else {
                state.early = outcome
                return nil
            }
            state.continuation = nil
            return (continuation, state.work, state.timer)
        }
        guard let (continuation, work, timer) = resumed else { return }
        work?.cancel()
        timer?.cancel()
        continuation.resume(with: outcome)
    }
}
