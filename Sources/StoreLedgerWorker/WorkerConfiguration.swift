package import StoreLedgerStore

/// How a worker process claims and processes events.
///
/// Environment keys (read by the `storeledger` command): `WORKER_CONCURRENCY`, `WORKER_BATCH_SIZE`,
/// `WORKER_LEASE_SECONDS`, `WORKER_POLL_SECONDS`, `WORKER_MAX_ATTEMPTS`.
package struct WorkerConfiguration: Sendable {
    /// Claim loops run in parallel in this process (default 2).
    package var concurrency: Int
    /// Events claimed per statement (default 50).
    package var batchSize: Int
    /// How long a claim is held before another worker may rescue it (default 30 s).
    package var lease: Duration
    /// The backstop poll when no NOTIFY arrives (default 2 s); also bounds retry latency.
    package var pollInterval: Duration
    /// How often expired leases are looked for (default 5 s; rescue happens within lease + this).
    package var rescueInterval: Duration
    /// How often monthly partitions are created ahead (default 1 h).
    package var partitionMaintenanceInterval: Duration
    /// Backoff and the attempt limit.
    package var retryPolicy: RetryPolicy

    /// Creates a configuration; every value has a production default.
    package init(
        concurrency: Int = 2,
        batchSize: Int = 500,
        lease: Duration = .seconds(30),
        pollInterval: Duration = .seconds(2),
        rescueInterval: Duration = .seconds(5),
        partitionMaintenanceInterval: Duration = .seconds(3600),
        retryPolicy: RetryPolicy = RetryPolicy()
    ) {
        self.concurrency = concurrency
        self.batchSize = batchSize
        self.lease = lease
        self.pollInterval = pollInterval
        self.rescueInterval = rescueInterval
        self.partitionMaintenanceInterval = partitionMaintenanceInterval
        self.retryPolicy = retryPolicy
    }
}
