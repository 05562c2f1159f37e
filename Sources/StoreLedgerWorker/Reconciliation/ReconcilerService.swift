package import Foundation
package import Logging
import ServiceLifecycle

/// Runs the reconciler periodically inside a worker process, or `dev` (`RECONCILE_INTERVAL_SECONDS`): each run asks for
/// the failed deliveries of the last `failuresWindow` and for every notification of the last `slidingWindow`, after
/// the window of any database history change not reconciled yet (a failover that may have lost events).
package struct ReconcilerService: Service {
    /// The reconciler.
    package let reconciler: Reconciler
    /// Time between runs.
    package let interval: Duration
    /// How far back to ask for failed deliveries (Apple keeps 180 days in production, 30 in sandbox).
    package let failuresWindow: TimeInterval
    /// How far back to ask for all notifications.
    package let slidingWindow: TimeInterval
    /// The logger.
    package let logger: Logger

    /// Creates the service.
    package init(
        reconciler: Reconciler, interval: Duration, failuresWindow: TimeInterval = 3 * 86_400, slidingWindow: TimeInterval = 2 * 3600, logger: Logger
    ) {
        self.reconciler = reconciler
        self.interval = interval
        self.failuresWindow = failuresWindow
        self.slidingWindow = slidingWindow
        self.logger = logger
    }

    /// Reconciles every `interval` until graceful shutdown; a failed run is logged and retried next time.
    package func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            await runOnce(now: Date())
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// One run: the windows of database history changes, then the failed deliveries of the last `failuresWindow`, then
    /// every notification of the last `slidingWindow` (``Reconciler/reconcile(_:now:logger:)``: each step runs even when
    /// one before it failed; a failure is logged and retried by the next run). Returns how many steps failed.
    @discardableResult
    package func runOnce(now: Date) async -> Int {
        await reconciler.reconcile(
            [
                .init("failed deliveries", from: now.addingTimeInterval(-failuresWindow), to: now, onlyFailures: true),
                .init("sliding window", from: now.addingTimeInterval(-slidingWindow), to: now, onlyFailures: false),
            ],
            now: now, logger: logger
        ).failures.count
    }
}
