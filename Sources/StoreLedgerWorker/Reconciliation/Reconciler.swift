package import Foundation
package import Logging
import Metrics
package import PostgresNIO
package import StoreLedgerAppStoreAPI
import StoreLedgerCore
package import StoreLedgerStore
import StoreLedgerVerification

/// Finds notifications Apple sent (or failed to send) that the log never received, with Get Notification
/// History, and appends each as an event with source `reconciliation`; workers process them like any other.
///
/// A notification counts as already known when its notificationUUID is a verified notification, was appended by
/// an earlier reconciliation, or is in a received event still waiting to be processed.
package struct Reconciler: Sendable {
    /// The database.
    package let client: PostgresClient
    /// Apple's API, one client per app: Apple answers Get Notification History for the app its token names, so each
    /// app of a multi-app deployment (`APPS`) is asked with its own.
    package let appStores: [AppStoreAPIClient]
    /// The environments to ask.
    package let environments: [AppStoreAPIHost]
    /// How its appends reach Postgres (the process's pooler and prepared sessions).
    package let sessions: DatabaseSessions
    /// The longest any one of its database operations may take (default a minute): past it the operation is left
    /// behind and counts as failed, so a database gone silent (a frozen primary, a vanished host) cannot stop the
    /// reconciler for good; the next run tries again on fresh connections.
    package var databaseDeadline: Duration = .seconds(60)

    /// Creates a reconciler for one app (`sessions` default: a direct connection).
    package init(
        client: PostgresClient, appStore: AppStoreAPIClient, environments: [AppStoreAPIHost], sessions: DatabaseSessions = DatabaseSessions()
    ) {
        self.init(client: client, appStores: [appStore], environments: environments, sessions: sessions)
    }

    /// Creates a reconciler for the apps of `appStores`, one client each (`sessions` default: a direct connection).
    package init(
        client: PostgresClient, appStores: [AppStoreAPIClient], environments: [AppStoreAPIHost], sessions: DatabaseSessions = DatabaseSessions()
    ) {
        self.client = client
        self.sessions = sessions
        self.appStores = appStores
        self.environments = environments
        // Export each environment's counter at 0 from the start, so Prometheus sees the first append as growth.
        for environment in environments { _ = Self.appendedCounter(environment) }
    }

    /// Every app in every environment this reconciler asks, in the order asked.
    package var scopes: [ReconciliationCoverage.Scope] {
        appStores.flatMap { appStore in
            environments.map { ReconciliationCoverage.Scope(bundleID: appStore.configuration.bundleID, environment: $0.rawValue) }
        }
    }

    /// `storeledger_reconciliation_appended_total{environment}`: missed notifications found and appended.
    static func appendedCounter(_ environment: AppStoreAPIHost) -> Counter {
        Counter(label: "storeledger_reconciliation_appended_total", dimensions: [("environment", environment.rawValue.lowercased())])
    }

    /// What one run found.
    package struct Result: Sendable, Equatable {
        /// Notifications Apple listed.
        package var listed = 0
        /// Notifications appended to the log.
        package var appended = 0
        /// Per app and environment whose history did not reach back to the window's start (Apple keeps 180 days, 30 in
        /// the sandbox): the instant before which nothing could be asked there (the window's end: nothing was asked).
        package var unreachableScopes: [ReconciliationCoverage.Scope: Date] = [:]

        /// ``unreachableScopes`` per environment: the latest such instant of its apps.
        package var unreachable: [AppStoreAPIHost: Date] {
            var byEnvironment: [AppStoreAPIHost: Date] = [:]
            for (scope, before) in unreachableScopes {
                guard let environment = AppStoreAPIHost(rawValue: scope.environment) else { continue }
                byEnvironment[environment] = max(byEnvironment[environment] ?? before, before)
            }
            return byEnvironment
        }

        /// Creates a result.
        package init(listed: Int = 0, appended: Int = 0) {
            self.listed = listed
            self.appended = appended
        }

        /// What was not asked, for operators: "Sandbox before 2026-…; Production: nothing (the window is older than
        /// Apple keeps)"; nil when everything was.
        package var unreachableSummary: String? {
            guard !unreachable.isEmpty else { return nil }
            return unreachable.sorted { $0.key.rawValue < $1.key.rawValue }.map { environment, before in
                "\(environment.rawValue) before \(before)"
            }.joined(separator: "; ")
        }
    }

    /// How far back Get Notification History reaches in `environment` (Apple keeps 180 days in production, 30 in the
    /// sandbox, and refuses an older `startDate` with 4000012); an hour less, so that a request is never refused for
    /// the time it took to send.
    static func retention(_ environment: AppStoreAPIHost) -> TimeInterval {
        (environment == .sandbox ? 30 : 180) * 86_400 - 3_600
    }

    /// Asks for the notifications of `[start, end)` (only the failed ones when `onlyFailures`) of each app in each
    /// environment, and appends the unknown ones. A window reaching further back than Apple keeps is asked from its
    /// oldest day Apple keeps. Every app and environment is asked even when another fails (production answers 401 until
    /// an app's first release, and the sandbox, which Apple never retries, must not wait for it); then the failures are
    /// thrown.
    /// A scope of `starts` (an app in an environment) is asked from its own start instead of `start`.
    package func run(
        from start: Date, to end: Date, onlyFailures: Bool, now: Date = Date(), starts: [ReconciliationCoverage.Scope: Date] = [:],
        logger: Logger
    ) async throws -> Result {
        var result = Result()
        var failures: [ReconciliationError.Failure] = []
        for appStore in appStores {
            await run(
                appStore, from: start, to: end, onlyFailures: onlyFailures, now: now, starts: starts, into: &result, failures: &failures,
                logger: logger)
        }
        if result.appended > 0 {
            logger.notice("reconciliation appended missed notifications", metadata: ["listed": "\(result.listed)", "appended": "\(result.appended)"])
        }
        if !failures.isEmpty { throw ReconciliationError(failures: failures, result: result) }
        return result
    }

    /// ``run(from:to:onlyFailures:now:starts:logger:)`` for one app: what it found is added to `result`, what failed to
    /// `failures`.
    private func run(
        _ appStore: AppStoreAPIClient, from windowStart: Date, to end: Date, onlyFailures: Bool, now: Date,
        starts: [ReconciliationCoverage.Scope: Date], into result: inout Result, failures: inout [ReconciliationError.Failure], logger: Logger
    ) async {
        let app = appStore.configuration.bundleID
        for environment in environments {
            let scope = ReconciliationCoverage.Scope(bundleID: app, environment: environment.rawValue)
            let start = starts[scope] ?? windowStart
            let from = max(start, now.addingTimeInterval(-Self.retention(environment)))
            if from > start { result.unreachableScopes[scope] = min(from, end) }
            guard from < end else {
                logger.notice(
                    "reconciliation: the window is older than Apple keeps; nothing to ask",
                    metadata: ["environment": "\(environment.rawValue)", "from": "\(start)", "to": "\(end)"])
                continue
            }
            let request = NotificationHistoryRequest(
                startDate: Int64(from.timeIntervalSince1970 * 1000), endDate: Int64(end.timeIntervalSince1970 * 1000),
                onlyFailures: onlyFailures ? true : nil
            )
            do {
                // Each page is appended before the next is asked for: a failure later in a long window keeps what was found.
                try await appStore.notificationHistory(request, environment: environment, logger: logger) { items in
                    result.listed += items.count
                    for item in items {
                        let uuid = Self.notificationUUID(of: item.signedPayload)
                        if uuid == nil {
                            logger.warning(
                                "reconciliation: a listed notification has no readable notificationUUID; appending it for the worker to judge")
                        }
                        result.appended += try await append(item.signedPayload, uuid: uuid, environment: environment, logger: logger) ? 1 : 0
                    }
                }
            } catch {
                logger.warning(
                    "reconciliation failed in one environment; the others go on",
                    metadata: ["app": "\(app)", "environment": "\(environment.rawValue)", "error": "\(String(reflecting: error))"])
                failures.append(
                    .init(
                        environment: environment, error: appStores.count > 1 ? "\(app): \(String(reflecting: error))" : String(reflecting: error),
                        app: app, unauthorized: (error as? AppStoreAPIError)?.code == .unauthorized))
            }
        }
    }

    /// Reconciles the window of every change of database history not reconciled yet (a failover or restore that may
    /// have lost acknowledged events; see ``DatabaseHistory``) and marks each done, or records why it failed so the
    /// next run tries again (and throws the first failure once every change was tried). Returns what the windows held.
    package func reconcileHistoryChanges(logger: Logger) async throws -> Result {
        let history = DatabaseHistory(client: client)
        var total = Result()
        var firstError: (any Error)?
        let changes = try await withDeadline(databaseDeadline, operation: { try await history.changes(unreconciledOnly: true, logger: logger) })
        // Scopes the ledger's reconciler covered into a window that this one does not ask (a one-off `reconcile` run from
        // a shell without the workers' APPS, APP_APPLE_ID or APPLE_ENVIRONMENTS): their lost notifications would stay
        // lost, so a window is reconciled only once they are asked too.
        let covered =
            changes.isEmpty
            ? [:]
            : try await withDeadline(databaseDeadline) { [client] in
                try await ReconciliationCoverage(client: client).coveredUntil(logger: logger)
            }
        for change in changes {
            let window = change.window()
            // Only scopes covered into the day before the window: one retired earlier (an app no longer in APPS) cannot
            // have lost anything then, and must not hold every later window unreconciled.
            let unasked = covered.filter { !scopes.contains($0.key) && $0.value >= window.start.addingTimeInterval(-86_400) }.keys
                .sorted { ($0.bundleID, $0.environment) < ($1.bundleID, $1.environment) }
            do {
                let (result, neverAnswered) = try await runAllowingUnreleased(from: window.start, to: window.end, logger: logger)
                guard unasked.isEmpty else {
                    throw ReconciliationError(
                        failures: unasked.map { scope in
                            ReconciliationError.Failure(
                                environment: AppStoreAPIHost(rawValue: scope.environment) ?? .production,
                                error: "\(scope.bundleID) \(scope.environment) not asked, which the workers' reconciler covers "
                                    + "(reconciliation_coverage): the window stays unreconciled until it is; configure this run as the "
                                    + "workers are (APPS or APP_BUNDLE_ID, APP_APPLE_ID, APPLE_ENVIRONMENTS)",
                                app: scope.bundleID)
                        }, result: result)
                }
                var notes: [String] = []
                if let unreachable = result.unreachableSummary {
                    notes.append(
                        "not reconciled: \(unreachable) (older than Apple keeps notification history: 180 days, 30 in the sandbox); "
                            + "notifications lost then cannot be recovered from Apple")
                    logger.error(
                        "a database history change's window is partly older than Apple keeps",
                        metadata: ["change": "\(change.id)", "from": "\(window.start)", "unreachable": "\(unreachable)"])
                }
                if !neverAnswered.isEmpty {
                    notes.append(
                        "not asked: \(neverAnswered.joined(separator: ", ")) answered 401 and never answered before (an app not released "
                            + "yet has no notifications there)")
                }
                let note = notes.isEmpty ? nil : notes.joined(separator: "; ")
                try await withDeadline(databaseDeadline) { [note] in
                    try await history.markReconciled(change.id, by: "reconciler", note: note, logger: logger)
                }
                total.listed += result.listed
                total.appended += result.appended
                logger.notice(
                    "reconciled the window of a database history change",
                    metadata: [
                        "change": "\(change.id)", "from": "\(window.start)", "to": "\(window.end)",
                        "listed": "\(result.listed)", "appended": "\(result.appended)",
                    ])
            } catch {
                // Recorded, and the other changes still go on; the next run tries this one again.
                let reason = String(reflecting: error)
                try? await withDeadline(databaseDeadline) {
                    try await history.markReconciled(change.id, by: "reconciler", error: reason, logger: logger)
                }
                firstError = firstError ?? error
            }
        }
        if let firstError { throw firstError }
        return total
    }

    /// ``run(from:to:onlyFailures:now:starts:logger:)`` over a database history change's window, which also counts as
    /// done when the only scopes that failed answered 401 and have never answered (no ``ReconciliationCoverage``: an
    /// app's Production before its first release, where no notification can have been lost) while another scope
    /// answered, so the same key works: the window is not asked again on every run, nor the change paged on for ever.
    /// Returns the result and those scopes, named.
    private func runAllowingUnreleased(from start: Date, to end: Date, logger: Logger) async throws -> (Result, [String]) {
        do {
            return (try await run(from: start, to: end, onlyFailures: false, logger: logger), [])
        } catch let error as ReconciliationError {
            let asked = appStores.count * environments.count
            guard error.failures.count < asked, error.failures.allSatisfy(\.unauthorized) else { throw error }
            let covered = try await withDeadline(databaseDeadline) { [client] in
                try await ReconciliationCoverage(client: client).coveredUntil(logger: logger)
            }
            let neverAnswered = error.failures.filter {
                covered[ReconciliationCoverage.Scope(bundleID: $0.app, environment: $0.environment.rawValue)] == nil
            }
            guard neverAnswered.count == error.failures.count else { throw error }
            return (error.result, neverAnswered.map { appStores.count > 1 ? "\($0.app) \($0.environment.rawValue)" : $0.environment.rawValue })
        }
    }

    /// Appends one notification unless it is already known; returns whether it did, and counts each append in
    /// `storeledger_reconciliation_appended_total{environment}` (a missed notification found: alert on its growth).
    private func append(_ signedPayload: String, uuid: String?, environment: AppStoreAPIHost, logger: Logger) async throws -> Bool {
        let appended = try await appendUnlessKnown(signedPayload, uuid: uuid, environment: environment, logger: logger)
        if appended {
            Self.appendedCounter(environment).increment()
        }
        return appended
    }

    /// Appends one notification unless it is already known (``ReconciliationStore``); returns whether it did.
    private func appendUnlessKnown(_ signedPayload: String, uuid: String?, environment: AppStoreAPIHost, logger: Logger) async throws -> Bool {
        try await withDeadline(databaseDeadline) { [client, sessions] in
            try await ReconciliationStore(client: client, sessions: sessions).appendUnlessKnown(
                signedPayload, notificationUUID: uuid, environmentHint: environment.environmentHint,
                environmentName: environment.rawValue, logger: logger
            )
        }
    }

    /// The notificationUUID in a notification's payload, read without verifying (only to avoid duplicates: the
    /// worker verifies the event).
    static func notificationUUID(of signedPayload: String) -> String? {
        SignedDataInspector.unverifiedString("notificationUUID", in: signedPayload)
    }
}
