import Logging
import ServiceLifecycle
import StoreLedgerStore

/// Retakes the charts' snapshots (``ChartStore/refresh(minimumAge:logger:)``) every `CONSOLE_CHART_REFRESH_MINUTES`
/// in the process serving the console, so the charts page reads a recent snapshot instead of computing the analytics
/// views. Several processes share the work: a snapshot younger than half the interval, or one being taken, is skipped.
package struct ConsoleChartRefresher: Service {
    /// The store.
    let store: ChartStore
    /// How often.
    let interval: Duration
    /// The logger.
    let logger: Logger

    /// Creates the refresher.
    init(store: ChartStore, interval: Duration, logger: Logger) {
        self.store = store
        self.interval = interval
        self.logger = logger
    }

    /// Refreshes, then waits an interval, until graceful shutdown.
    package func run() async throws {
        let seconds = Double(interval.components.seconds)
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    if try await store.refresh(minimumAge: seconds / 2, logger: logger) { logger.info("console chart snapshots refreshed") }
                } catch {
                    logger.warning("console chart snapshots not refreshed", metadata: ["error": "\(String(reflecting: error))"])
                }
                try? await Task.sleep(for: interval)
            }
        }
    }
}
