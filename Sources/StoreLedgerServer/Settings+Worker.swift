package import StoreLedgerAppStoreAPI
import StoreLedgerCore
package import StoreLedgerProcessing
package import StoreLedgerStore
package import StoreLedgerWorker

extension Settings {
    /// The worker's settings: `WORKER_CONCURRENCY`, `WORKER_BATCH_SIZE`, `WORKER_LEASE_SECONDS`,
    /// `WORKER_POLL_SECONDS`, `WORKER_MAX_ATTEMPTS`.
    package func worker() throws(SettingsError) -> WorkerConfiguration {
        WorkerConfiguration(
            concurrency: try int("WORKER_CONCURRENCY", default: 2, in: 1...64),
            batchSize: try int("WORKER_BATCH_SIZE", default: 500, in: 1...1000),
            lease: .seconds(try int("WORKER_LEASE_SECONDS", default: 30, in: 1...3600)),
            pollInterval: .seconds(try int("WORKER_POLL_SECONDS", default: 2, in: 1...300)),
            retryPolicy: try retryPolicy()
        )
    }

    /// `WORKER_MAX_ATTEMPTS` (default 20): attempts before an event is `dead`, for workers and inline processing.
    package func retryPolicy() throws(SettingsError) -> RetryPolicy {
        RetryPolicy(maximumAttempts: try int("WORKER_MAX_ATTEMPTS", default: 20, in: 1...100))
    }

    /// `WEBHOOK_RETENTION_DAYS` (default 30; 0 keeps them forever): how long finished webhook deliveries (delivered
    /// or failed) and their attempt log are kept.
    package func webhookRetention() throws(SettingsError) -> Int {
        try int("WEBHOOK_RETENTION_DAYS", default: WebhookDispatcher.defaultRetentionDays, in: 0...3_650)
    }

    /// `WEBHOOK_MAX_ATTEMPTS` (default 19): delivery attempts before a webhook delivery is `failed`.
    package func webhookMaximumAttempts() throws(SettingsError) -> Int {
        try int("WEBHOOK_MAX_ATTEMPTS", default: WebhookDispatcher.defaultMaximumAttempts, in: 1...100)
    }

    /// `RECONCILE_INTERVAL_SECONDS`: run the reconciler in each worker this often (unset: not at all).
    package func reconcileInterval() throws(SettingsError) -> Duration? {
        guard string("RECONCILE_INTERVAL_SECONDS") != nil else { return nil }
        return .seconds(try int("RECONCILE_INTERVAL_SECONDS", default: 900, in: 60...86_400))
    }

    /// The environments reconciliation asks: those the verifiers accept.
    package func reconciliationEnvironments(_ verifiers: LedgerVerifiers) -> [AppStoreAPIHost] {
        verifiers.environments.compactMap(AppStoreAPIHost.init)
    }
}
