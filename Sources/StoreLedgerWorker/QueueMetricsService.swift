package import Logging
import Metrics
package import PostgresNIO
import ServiceLifecycle
import StoreLedgerStore

/// Publishes the queue's shape as gauges every `interval`: `storeledger_queue_depth{state}` and
/// `storeledger_queue_oldest_pending_seconds` (0 when nothing waits), `storeledger_queue_oldest_unfinished_seconds`
/// (retries in their backoff counted), `storeledger_database_notify_queue_usage` (PostgreSQL's NOTIFY queue, 0 to 1), and
/// `storeledger_database_history_unreconciled_changes` (failovers or restores whose window of possibly lost events
/// is not reconciled yet; see ``DatabaseHistory``). Every worker publishes the same global values; aggregate with
/// `max` in Prometheus.
package struct QueueMetricsService: Service {
    /// The database.
    package let client: PostgresClient
    /// How often to sample.
    package let interval: Duration
    /// How long a sample may go unanswered before the service stops waiting for it (default: the interval, at least
    /// 10 s): a database that goes silent (a frozen primary whose kernel still answers TCP) would otherwise stop the
    /// sampling for good, and the gauges (the unreconciled failover windows' among them) would go stale unnoticed.
    package let timeout: Duration
    /// The logger.
    package let logger: Logger

    /// Creates the service.
    package init(client: PostgresClient, interval: Duration = .seconds(15), timeout: Duration? = nil, logger: Logger) {
        self.client = client
        self.interval = interval
        self.timeout = timeout ?? max(interval, .seconds(10))
        self.logger = logger
    }

    /// Samples until graceful shutdown.
    package func run() async throws {
        while !Task.isCancelledOrShuttingDown {
            do {
                try await sampleWithinTimeout()
            } catch {
                logger.warning("queue metrics not sampled", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }

    /// ``sample()``, given up on (``DeadlineExceeded``) when it is not answered within `timeout`.
    package func sampleWithinTimeout() async throws {
        try await withDeadline(timeout) { [self] in try await sample() }
    }

    /// Reads the queue's shape and the unreconciled history changes once and records them in the gauges.
    package func sample() async throws {
        let statistics = try await OperatorStore(client: client).statistics(logger: logger)
        for (state, count) in statistics.depth {
            Gauge(label: "storeledger_queue_depth", dimensions: [("state", state)]).record(count)
        }
        Gauge(label: "storeledger_queue_oldest_pending_seconds").record(statistics.oldestPendingAgeSeconds ?? 0)
        Gauge(label: "storeledger_queue_oldest_requeued_seconds").record(statistics.oldestRequeuedAgeSeconds ?? 0)
        Gauge(label: "storeledger_queue_oldest_unfinished_seconds").record(statistics.oldestUnfinishedAgeSeconds ?? 0)
        Gauge(label: "storeledger_database_notify_queue_usage").record(statistics.notifyQueueUsage)
        let unreconciled = try await DatabaseHistory(client: client).changes(unreconciledOnly: true, logger: logger)
        Gauge(label: "storeledger_database_history_unreconciled_changes").record(unreconciled.count)
    }
}

extension Task where Success == Never, Failure == Never {
    /// Whether the current task is cancelled or the service group is shutting down gracefully.
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
