package import Foundation
package import Logging
import StoreLedgerAppStoreAPI
package import StoreLedgerStore

extension Reconciler {
    /// One window to ask Apple about.
    package struct Window: Sendable {
        /// What it is, in failure messages (`failed deliveries`, `the window asked for`).
        package var name: String
        /// Its start.
        package var from: Date
        /// Its end.
        package var to: Date
        /// Only the notifications Apple failed to deliver.
        package var onlyFailures: Bool
        /// Where the window starts for an app in an environment, when not at ``from``.
        package var starts: [ReconciliationCoverage.Scope: Date]

        /// Creates a window.
        package init(_ name: String, from: Date, to: Date, onlyFailures: Bool, starts: [ReconciliationCoverage.Scope: Date] = [:]) {
            self.name = name
            self.from = from
            self.to = to
            self.onlyFailures = onlyFailures
            self.starts = starts
        }
    }

    /// What ``reconcile(_:now:logger:)`` gave.
    package struct Run: Sendable {
        /// What the windows of database history changes held.
        package var history = Result()
        /// What each window held (in part, when some environment failed), in the order asked.
        package var windows: [Result] = []
        /// Each step that failed, named, with its error.
        package var failures: [String] = []
        /// Per window (by name), the apps in environments that failed in it.
        package var failedScopes: [String: [ReconciliationCoverage.Scope]] = [:]
    }

    /// A reconciliation as the workers' service and `storeledger reconcile` run it: first the windows of database
    /// history changes not reconciled yet (a failover or restore that may have lost events), then each of `windows`.
    /// Every step runs even when one before it failed (a change whose window Apple refuses must not stop the rest), and
    /// each failure is logged and returned; the next run tries again.
    package func reconcile(_ windows: [Window], now: Date = Date(), logger: Logger) async -> Run {
        var run = Run()
        func failed(_ step: String, _ error: any Error) {
            run.failures.append("\(step): \(error)")
            logger.warning("reconciliation failed; the next run retries", metadata: ["step": "\(step)", "error": "\(String(reflecting: error))"])
        }
        do {
            run.history = try await reconcileHistoryChanges(logger: logger)
        } catch {
            failed("database history changes", error)
        }
        for window in windows {
            do {
                run.windows.append(
                    try await self.run(
                        from: window.from, to: window.to, onlyFailures: window.onlyFailures, now: now, starts: window.starts, logger: logger))
            } catch {
                let reconciliation = error as? ReconciliationError
                run.windows.append(reconciliation?.result ?? Result())
                // Without the failures' scopes (another error), every scope counts as failed.
                run.failedScopes[window.name] =
                    reconciliation?.failures.map { .init(bundleID: $0.app, environment: $0.environment.rawValue) } ?? scopes
                failed(window.name, error)
            }
        }
        return run
    }
}
