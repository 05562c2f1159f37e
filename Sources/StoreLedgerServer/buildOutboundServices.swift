package import Configuration
import Logging
package import ServiceLifecycle
package import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerWorker

/// Builds the services that reach out from a process that works the queue (`work`, and `dev`, which is receiver and
/// worker in one): the webhook dispatcher (`WEBHOOK_MAX_ATTEMPTS`, `WEBHOOK_RETENTION_DAYS`) and, with
/// `RECONCILE_INTERVAL_SECONDS`, the reconciler for the environments `verifiers` accept (read only then: a worker of the
/// envelope handler needs no app settings; the reconciler needs the App Store Server API credentials); each starts
/// after `preflight` (``ServiceAfterPreflight``). One function for both, so that `dev` honours the same settings as `work`.
package func buildOutboundServices(
    reader: ConfigReader, context: ServerContext, verifiers: () throws -> LedgerVerifiers,
    preflight: @escaping @Sendable () async throws -> Void = {}
) async throws -> [any Service] {
    let settings = Settings(reader: reader)
    var services: [any Service] = [
        WebhookDispatcher(
            client: context.client, maximumAttempts: try settings.webhookMaximumAttempts(), retentionDays: try settings.webhookRetention(),
            logger: context.logger)
    ]
    if let interval = try settings.reconcileInterval() {
        let appStores = try await settings.appStoreClients()
        guard !appStores.isEmpty else {
            throw SettingsError(
                .missing, "RECONCILE_INTERVAL_SECONDS needs the App Store Server API: set APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY",
                key: "RECONCILE_INTERVAL_SECONDS")
        }
        let reconciler = Reconciler(
            client: context.client, appStores: appStores, environments: settings.reconciliationEnvironments(try verifiers()),
            sessions: context.sessions
        )
        services.append(ReconcilerService(reconciler: reconciler, interval: interval, logger: context.logger))
    }
    return services.map { ServiceAfterPreflight($0, after: preflight) }
}
