import Synchronization

/// Wakes every waiting claim loop at once (on NOTIFY, on rescued leases, or on shutdown).
///
/// A waiter passes the generation it last saw, so a signal that lands between "the queue looked
/// empty" and "start waiting" is never lost.
final class WakeSignal: Sendable {
    private struct State {
        var generation = 0
        var nextWaiterID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// The current generation; pass it to ``wait(after:timeout:)``.
    var generation: Int { state.withLock { $0.generation } }

    /// Wakes all current waiters.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when a signal newer than `generation` arrives, after `timeout`, or on cancellation.
    func wait(after generation: Int, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForSignal(after: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    /// Returns after `timeout`, or sooner only once `stopping` is set (and signalled, as shutdown does) or on
    /// cancellation: a backoff that new work must not cut short.
    func wait(for timeout: Duration, unlessStopped stopping: StopFlag) async {
        let deadline = ContinuousClock.now + timeout
        while !Task.isCancelled {
            let generation = self.generation
            let left = ContinuousClock.now.duration(to: deadline)
            if stopping.isSet || left <= .zero { return }
            await wait(after: generation, timeout: left)
        }
    }

    private func waitForSignal(after generation: Int) async {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
