package import Foundation
package import Logging
import ServiceLifecycle

/// Runs the reconciler periodically inside a worker process, or `dev` (`RECONCILE_INTERVAL_SECONDS`): each run asks for
/// the failed deliveries of the last `failuresWindow` and for every notification since the last run that asked for
/// them successfully (at least the last `slidingWindow`, and the interval with a margin), after the window of any
/// database history change not reconciled yet (a failover that may have lost events).
package struct ReconcilerService: Service {
    /// The reconciler.
    package let reconciler: Reconciler
    /// Time between runs.
    package let interval: Duration
    /// How far back to ask for failed deliveries (Apple keeps 180 days in production, 30 in sandbox).
    package let failuresWindow: TimeInterval
    /// How far back to ask for all notifications, at least.
    package let slidingWindow: TimeInterval
    /// The logger.
    package let logger: Logger

    /// How far before the end of the last window asked, and beyond the interval, the next window reaches: Apple's clock
    /// and ours differ, and a run takes time.
    package static let overlap: TimeInterval = 600

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

    /// Reconciles every `interval` until graceful shutdown; a failed run is logged, and the next one asks again for all
    /// it could not.
    package func run() async throws {
        var coveredUntil: Date?
        while !Task.isCancelledOrShuttingDown {
            coveredUntil = await runOnce(now: Date(), coveredUntil: coveredUntil).coveredUntil
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Where the window of every notification starts for a run at `now`: the last `slidingWindow`, or the interval and
    /// ``overlap`` when longer, and back to ``overlap`` before `coveredUntil` (the end of the last window asked
    /// successfully) when that is earlier. So consecutive runs leave no stretch unasked whatever the interval, and a
    /// stretch whose run failed (Apple down, a rate limit, the database) is asked again; Apple keeps 180 days (30 in the
    /// sandbox), and what is older is reported unreachable.
    package func slidingStart(now: Date, coveredUntil: Date?) -> Date {
        let intervalSeconds = TimeInterval(interval.components.seconds)
        let recent = now.addingTimeInterval(-max(slidingWindow, intervalSeconds + Self.overlap))
        guard let coveredUntil else { return recent }
        return min(recent, coveredUntil.addingTimeInterval(-Self.overlap))
    }

    /// One run: the windows of database history changes, then the failed deliveries of the last `failuresWindow`, then
    /// every notification since ``slidingStart(now:coveredUntil:)`` (``Reconciler/reconcile(_:now:logger:)``: each step
    /// runs even when one before it failed; a failure is logged and retried by the next run). Returns how many steps
    /// failed, and how far every notification has been asked for: `now` when this run's window was, else `coveredUntil`.
    @discardableResult
    package func runOnce(now: Date, coveredUntil: Date? = nil) async -> (failures: Int, coveredUntil: Date?) {
        let sliding = "every notification"
        let run = await reconciler.reconcile(
            [
                .init("failed deliveries", from: now.addingTimeInterval(-failuresWindow), to: now, onlyFailures: true),
                .init(sliding, from: slidingStart(now: now, coveredUntil: coveredUntil), to: now, onlyFailures: false),
            ],
            now: now, logger: logger
        )
        return (run.failures.count, run.failedSteps.contains(sliding) ? coveredUntil : now)
    }
}
