package import Foundation
package import Logging
import ServiceLifecycle
import StoreLedgerStore

/// Runs the reconciler periodically inside a worker process, or `dev` (`RECONCILE_INTERVAL_SECONDS`): each run asks for
/// the failed deliveries of the last `failuresWindow` and, for each app in each environment, for every notification
/// since the end of the last window asked successfully for it (``ReconciliationCoverage``, kept in the database: across
/// restarts and shared by every worker; at least the last `slidingWindow`, and the interval with a margin), after the
/// window of any database history change not reconciled yet (a failover that may have lost events).
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
    /// The every-notification step's name, in failures.
    static let everyNotification = "every notification"

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
        while !Task.isCancelledOrShuttingDown {
            await runOnce(now: Date())
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// Where the window of every notification starts for a run at `now`: the last `slidingWindow`, or the interval and
    /// ``overlap`` when longer, and back to ``overlap`` before `coveredUntil` (the end of the last window asked
    /// successfully) when that is earlier. So consecutive runs leave no stretch unasked whatever the interval, and a
    /// stretch whose run failed (Apple down, a rate limit, the database) is asked again, within what Apple keeps.
    package func slidingStart(now: Date, coveredUntil: Date?) -> Date {
        let intervalSeconds = TimeInterval(interval.components.seconds)
        let recent = now.addingTimeInterval(-max(slidingWindow, intervalSeconds + Self.overlap))
        guard let coveredUntil else { return recent }
        return min(recent, coveredUntil.addingTimeInterval(-Self.overlap))
    }

    /// One run: the windows of database history changes, then the failed deliveries of the last `failuresWindow`, then
    /// every notification of each app in each environment since its ``slidingStart(now:coveredUntil:)``
    /// (``Reconciler/reconcile(_:now:logger:)``: each step runs even when one before it failed; a failure is logged and
    /// retried by the next run). Each app in each environment asked successfully is recorded as covered up to `now`;
    /// one that fails (Production before the app's first release) holds back only itself. A stretch older than Apple
    /// keeps is logged as an error: notifications lost then cannot be recovered. Returns how many steps failed.
    @discardableResult
    package func runOnce(now: Date) async -> Int {
        let coverage = ReconciliationCoverage(client: reconciler.client)
        let scopes = reconciler.scopes
        // Unread (the database failing), nothing is recorded after the run either: the recent window asked then is not
        // all that an earlier failure may have left unasked.
        var covered: [ReconciliationCoverage.Scope: Date]?
        do {
            covered = try await withDeadline(reconciler.databaseDeadline) { try await coverage.coveredUntil(logger: logger) }
        } catch {
            logger.warning(
                "reconciliation: how far earlier runs reached could not be read; asking the recent window, recording nothing",
                metadata: ["error": "\(String(reflecting: error))"])
        }
        let recent = slidingStart(now: now, coveredUntil: nil)
        let starts = Dictionary(uniqueKeysWithValues: scopes.map { ($0, slidingStart(now: now, coveredUntil: covered?[$0])) })
        let run = await reconciler.reconcile(
            [
                .init("failed deliveries", from: now.addingTimeInterval(-failuresWindow), to: now, onlyFailures: true),
                .init(Self.everyNotification, from: recent, to: now, onlyFailures: false, starts: starts),
            ],
            now: now, logger: logger
        )
        let failed = Set(run.failedScopes[Self.everyNotification] ?? [])
        if let covered {
            do {
                try await withDeadline(reconciler.databaseDeadline) {
                    try await coverage.record(scopes.filter { !failed.contains($0) }, until: now, logger: logger)
                    // A scope failing before its first success keeps its place: the next run asks from this run's start.
                    try await coverage.record(scopes.filter { failed.contains($0) && covered[$0] == nil }, until: recent, logger: logger)
                }
            } catch {
                logger.warning(
                    "reconciliation: how far this run reached could not be recorded; the next run asks again from the last record",
                    metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        // A stretch older than Apple keeps, for an app and environment that was asked (one that keeps failing, Production
        // before the app's first release, is not said to have lost anything).
        for (scope, before) in (run.windows.last?.unreachableScopes ?? [:]) where !failed.contains(scope) {
            logger.error(
                "reconciliation: runs failed for longer than Apple keeps notification history; what was lost then cannot be recovered",
                metadata: ["app": "\(scope.bundleID)", "environment": "\(scope.environment)", "not asked before": "\(before)"])
        }
        return run.failures.count
    }
}
