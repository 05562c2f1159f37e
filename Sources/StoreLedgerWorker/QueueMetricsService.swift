public import Logging
import Metrics
public import PostgresNIO
public import ServiceLifecycle
import StoreLedgerStore

/// Publishes the queue's shape as gauges every `interval`: `storeledger_queue_depth{state}` and
/// `storeledger_queue_oldest_pending_seconds` (0 when nothing waits). Every worker publishes the same global
/// values; aggregate with `max` in Prometheus.
public struct QueueMetricsService: Service {
    /// The database.
    public let client: PostgresClient
    /// How often to sample.
    public let interval: Duration
    /// The logger.
    public let logger: Logger

    /// Creates the service.
    public init(client: PostgresClient, interval: Duration = .seconds(15), logger: Logger) {
        self.client = client
        self.interval = interval
        self.logger = logger
    }

    /// Samples until graceful shutdown.
    public func run() async throws {
        let store = OperatorStore(client: client)
        let oldest = Gauge(label: "storeledger_queue_oldest_pending_seconds")
        while !Task.isCancelledOrShuttingDown {
            do {
                let statistics = try await store.statistics(logger: logger)
                for (state, count) in statistics.depth {
                    Gauge(label: "storeledger_queue_depth", dimensions: [("state", state)]).record(count)
                }
                oldest.record(statistics.oldestPendingAgeSeconds ?? 0)
            } catch {
                logger.debug("queue metrics not sampled", metadata: ["error": "\(String(reflecting: error))"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}

extension Task where Success == Never, Failure == Never {
    /// Whether the current task is cancelled or the service group is shutting down gracefully.
    static var isCancelledOrShuttingDown: Bool { Task.isCancelled || Task.isShuttingDownGracefully }
}
