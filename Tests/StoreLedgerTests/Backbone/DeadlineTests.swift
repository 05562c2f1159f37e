import Synchronization
import Testing

@testable import StoreLedgerStore

/// `withDeadline` answers at its deadline even when the operation ignores cancellation (as a query the database
/// holds does), and hands the operation's result or error through unchanged otherwise.
@Suite("Deadline")
struct DeadlineTests {
    /// An operation that runs until `release` is set, whatever cancellation says.
    final class Stubborn: Sendable {
        let release = Mutex(false)
        let finished = Mutex(false)
        func run() async -> Int {
            await pollIgnoringCancellation(every: .milliseconds(5)) { self.release.withLock { $0 } }
            finished.withLock { $0 = true }
            return 1
        }
    }

    @Test func theDeadlineAnswersWhileTheOperationIgnoresCancellation() async throws {
        let stubborn = Stubborn()
        await #expect(throws: DeadlineExceeded.self) {
            _ = try await withDeadline(.milliseconds(100)) { await stubborn.run() }
        }
        // It answered while the operation was still running.
        #expect(stubborn.finished.withLock { $0 } == false)
        stubborn.release.withLock { $0 = true }
    }

    @Test func resultsAndErrorsPassThrough() async throws {
        #expect(try await withDeadline(.seconds(10)) { 42 } == 42)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await withDeadline(.seconds(10)) { throw Failure() } }
    }

    @Test func cancellingTheCallerReturnsAtOnce() async throws {
        let stubborn = Stubborn()
        let task = Task { try await withDeadline(.seconds(60)) { await stubborn.run() } }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(stubborn.finished.withLock { $0 } == false)
        stubborn.release.withLock { $0 = true }
    }
}
