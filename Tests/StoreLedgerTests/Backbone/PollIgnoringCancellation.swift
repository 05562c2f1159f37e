/// Waits until `condition` holds, checking it every `interval`, in a task of its own that the caller's cancellation
/// does not reach: the caller waits like an operation that ignores cancellation (a query the database holds).
///
/// The wait sleeps between checks even once the caller is cancelled. A cancelled task's `Task.sleep` throws at once
/// without suspending, so a polling loop in the caller itself would hold a cooperative thread from then on; two such
/// loops held both threads of a 2-core machine, starved the tasks that would have released them, and hung the suite.
func pollIgnoringCancellation(every interval: Duration, until condition: @escaping @Sendable () -> Bool) async {
    await Task.detached {
        while !condition() { try? await Task.sleep(for: interval) }
    }.value
}
