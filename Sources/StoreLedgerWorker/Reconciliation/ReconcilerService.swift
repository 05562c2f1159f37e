package import Foundation
package import Logging
import ServiceLifecycle

/// Runs the reconciler periodically inside a worker process (`RECONCILE_INTERVAL_SECONDS`): each run asks for
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
            let now = Date()
            do {
                _ = try await reconciler.reconcileHistoryChanges(logger: logger)
                _ = try await reconciler.run(from: now.addingTimeInterval(-failuresWindow), to: now, onlyFailures: true, logger: logger)
                _ = try await reconciler.run(from: now.addingTimeInterval(-slidingWindow), to: now, onlyFailures: false, logger: logger)
            } catch {
                logger.warning("reconciliation failed; next run retries", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
