import Foundation
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

@Suite("Reconciler: missed notifications from Get Notification History")
struct ReconcilerTests {
    static let pki = try! TestPKI()

    @Test func appendsOnlyWhatTheLogNeverReceivedAndWorkersProcessIt() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let signer = pipeline.signer
                let received = try signer.signedNotification(
                    type: "DID_RENEW", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "11"))
                let missed = try signer.signedNotification(
                    type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "12"))
                let failed = try signer.signedNotification(
                    type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signedDate: Date(),
                    renewalInfo: signer.renewalInfoPayload(originalTransactionID: "12"))
                let pendingDelivery = try signer.signedNotification(type: "TEST", signedDate: Date())
                // One was delivered and processed, one was delivered and still waits for a worker.
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(received)"}"#)
                try await pipeline.drain()
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(pendingDelivery)"}"#)
                await fake.state.setNotificationHistory(
                    [received, missed, failed, pendingDelivery].map {
                        NotificationHistoryItem(signedPayload: $0, sendAttempts: [.init(attemptDate: 1, sendAttemptResult: "TIMED_OUT")])
                    },
                    environment: .sandbox
                )
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox]
                )
                let first = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                #expect(first == .init(listed: 4, appended: 2))
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation' AND environment_hint = 'sandbox'") == 2)
                try await pipeline.drain()
                #expect(try await db.scalar("SELECT count(*) FROM notifications") == 4)
                // Idempotent: a second run appends nothing.
                let second = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: true, logger: db.logger)
                #expect(second == .init(listed: 4, appended: 0))
                let requests = await fake.state.requests
                #expect(requests.allSatisfy { $0.path == "/inApps/v1/notifications/history" && $0.environment == .sandbox })
            }
        }
    }

    /// A long window's pages are appended as they arrive: Apple's rate limit on a later page fails the run, but what
    /// the pages before it held is in the log (a second run lists them again and appends only the rest).
    @Test func pagesBeforeAFailingPageAreKept() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let count = FakeAppStoreServer.pageSize * 2 + 5
                let missed = try (0..<count).map { index in
                    try pipeline.signer.signedNotification(
                        type: "DID_RENEW", signedDate: Date(), transaction: pipeline.signer.transactionPayload(transactionID: "\(700 + index)"))
                }
                await fake.state.setNotificationHistory(
                    missed.map { NotificationHistoryItem(signedPayload: $0, sendAttempts: nil) }, environment: .sandbox)
                // Pages one and two answer; the third is refused for good (two attempts).
                await fake.state.inject([.pass, .pass, .rateLimited(retryAfterSeconds: 0), .rateLimited(retryAfterSeconds: 0)])
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 2)),
                    environments: [.sandbox])
                await #expect(throws: ReconciliationError.self) {
                    _ = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                }
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation'") == FakeAppStoreServer.pageSize * 2)
                let again = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                #expect(again == .init(listed: count, appended: 5))
            }
        }
    }

    @Test func aNotificationThatNeverVerifiesIsNotAppendedTwice() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let forged = try TestSigner(pki: try TestPKI(), bundleID: "com.example.app").signedNotification(type: "TEST", signedDate: Date())
                await fake.state.setNotificationHistory([NotificationHistoryItem(signedPayload: forged, sendAttempts: nil)], environment: .production)
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.production]
                )
                #expect(
                    try await reconciler.run(from: Date().addingTimeInterval(-60), to: Date(), onlyFailures: false, logger: db.logger).appended == 1)
                try await pipeline.drain()
                #expect(try await pipeline.count(.rejected) == 1)
                #expect(
                    try await reconciler.run(from: Date().addingTimeInterval(-60), to: Date(), onlyFailures: false, logger: db.logger).appended == 0)
            }
        }
    }

    /// A database operation that does not answer (here: the log locked by another session, as a stuck migration or a
    /// frozen primary would leave it) fails the run at the reconciler's database deadline instead of holding it; the
    /// next run, once the database answers again, appends the notification exactly once.
    @Test(.timeLimit(.minutes(8)))
    func aDatabaseThatDoesNotAnswerFailsTheRunAtItsDeadline() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                _ = try await missedSandboxNotification(db, fake)
                var reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox]
                )
                reconciler.databaseDeadline = .seconds(2)
                // Held for 20 s at most: a run without the deadline would wait for it and then succeed.
                try await db.withTableLocked("events") { [reconciler] in
                    let error = await #expect(throws: ReconciliationError.self) {
                        try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                    }
                    #expect(error?.failures.first?.error.contains("did not finish within 2.0 seconds") == true, "\(String(describing: error))")
                }
                reconciler.databaseDeadline = .seconds(60)
                _ = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                let appended = try await eventually(within: .seconds(60), every: .milliseconds(100)) {
                    try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation'") == 1
                }
                #expect(appended)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation'") == 1)
            }
        }
    }

    /// A missed sandbox notification, signed now, in the fake's sandbox history; returns the pipeline.
    func missedSandboxNotification(_ db: TestDatabase, _ fake: FakeAppStoreServer) async throws -> LedgerPipeline {
        let pipeline = try LedgerPipeline(db, pki: Self.pki)
        let missed = try pipeline.signer.signedNotification(
            type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(), transaction: pipeline.signer.transactionPayload(transactionID: "31"))
        await fake.state.setNotificationHistory([NotificationHistoryItem(signedPayload: missed, sendAttempts: nil)], environment: .sandbox)
        return pipeline
    }

    /// Records a change of database history (a failover from system `previous` to `system`) as ``DatabaseHistory`` would,
    /// the last event before it received `lastReceived` ago and the change noticed `noticed` ago (PostgreSQL intervals).
    static func recordHistoryChange(_ db: TestDatabase, system: String, previous: String, lastReceived: String, noticed: String) async throws {
        try await db.client.query(
            """
            INSERT INTO database_history (system_identifier, timeline, previous_system_identifier, previous_timeline, last_received_at,
                                          noticed_at, event_id_floor)
            VALUES (\(system), 1, \(previous), 1, now() - \(lastReceived)::interval, now() - \(noticed)::interval, 0)
            """, logger: db.logger)
    }

    /// Whether the change to `system` is marked reconciled with a note matching `noteLike` (a LIKE pattern).
    static func isReconciled(_ db: TestDatabase, system: String, noteLike: String) async throws -> Bool {
        try await db.scalar(
            """
            SELECT count(*) FROM database_history
            WHERE system_identifier = \(system) AND reconciled_at IS NOT NULL AND last_reconcile_error LIKE \(noteLike)
            """) == 1
    }

    /// Production answers 401 until the app's first release; the sandbox, which Apple never retries, is still asked.
    @Test func everyEnvironmentIsAskedWhenOneFails() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                _ = try await missedSandboxNotification(db, fake)
                await fake.state.setProductionUnreleased(true)
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1)),
                    environments: [.production, .sandbox]
                )
                let error = await #expect(throws: ReconciliationError.self) {
                    try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                }
                #expect(error?.failures.map(\.environment) == [.production])
                #expect(error?.result == .init(listed: 1, appended: 1))
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation' AND environment_hint = 'sandbox'") == 1)

                // A failover's window: Production, which has never answered (no coverage), cannot have lost anything;
                // the sandbox answered, so the change is reconciled, with a note, not paged on and asked again for ever.
                try await Self.recordHistoryChange(db, system: "2", previous: "1", lastReceived: "1 hour", noticed: "50 minutes")
                _ = try await reconciler.reconcileHistoryChanges(logger: db.logger)
                #expect(try await Self.isReconciled(db, system: "2", noteLike: "not asked: Production answered 401%"))
                // Once Production has answered (it is released), a 401 there is a failure again: the change stays unreconciled.
                try await ReconciliationCoverage(client: db.client).record(
                    [.init(bundleID: "com.example.app", environment: "Production")], until: Date().addingTimeInterval(-7_200), logger: db.logger)
                try await Self.recordHistoryChange(db, system: "3", previous: "2", lastReceived: "30 minutes", noticed: "20 minutes")
                await #expect(throws: ReconciliationError.self) { _ = try await reconciler.reconcileHistoryChanges(logger: db.logger) }
                #expect(try await db.scalar("SELECT count(*) FROM database_history WHERE system_identifier = '3' AND reconciled_at IS NULL") == 1)
            }
        }
    }

    /// A one-off `storeledger reconcile` reads its apps and environments from the operator's shell: without the
    /// workers' APP_APPLE_ID it asks the sandbox only. A failover's window is then not marked reconciled while a scope
    /// the workers' reconciler covers (reconciliation_coverage) was not asked: its lost notifications would stay lost
    /// with the alert cleared. Asked as the workers ask, it is.
    @Test func aWindowIsNotReconciledWithoutTheScopesTheWorkersCover() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1))
                try await ReconciliationCoverage(client: db.client).record(
                    [.init(bundleID: "com.example.app", environment: "Production"), .init(bundleID: "com.example.app", environment: "Sandbox")],
                    until: Date().addingTimeInterval(-7_200), logger: db.logger)
                try await Self.recordHistoryChange(db, system: "2", previous: "1", lastReceived: "1 hour", noticed: "50 minutes")
                let sandboxOnly = Reconciler(client: db.client, appStore: appStore, environments: [.sandbox])
                let error = await #expect(throws: ReconciliationError.self) { _ = try await sandboxOnly.reconcileHistoryChanges(logger: db.logger) }
                #expect(error?.failures.map(\.environment) == [.production])
                #expect(error?.description.contains("APP_APPLE_ID") == true)
                #expect(try await db.scalar("SELECT count(*) FROM database_history WHERE system_identifier = '2' AND reconciled_at IS NULL") == 1)
                let asTheWorkers = Reconciler(client: db.client, appStore: appStore, environments: [.production, .sandbox])
                _ = try await asTheWorkers.reconcileHistoryChanges(logger: db.logger)
                #expect(try await db.scalar("SELECT count(*) FROM database_history WHERE system_identifier = '2' AND reconciled_at IS NOT NULL") == 1)
                // A scope retired more than a day before a window (an app removed from APPS: its coverage stops there) does
                // not hold that window.
                try await db.client.query(
                    "UPDATE reconciliation_coverage SET covered_until = now() - interval '3 days' WHERE environment = 'Production'",
                    logger: db.logger)
                try await Self.recordHistoryChange(db, system: "3", previous: "2", lastReceived: "1 hour", noticed: "50 minutes")
                _ = try await sandboxOnly.reconcileHistoryChanges(logger: db.logger)
                #expect(try await db.scalar("SELECT count(*) FROM database_history WHERE system_identifier = '3' AND reconciled_at IS NOT NULL") == 1)
            }
        }
    }

    /// Apple answers Get Notification History for the app its token names: each app of a multi-app deployment is asked
    /// with its own token, and a failure of one app does not keep the other's notifications out. Before, only the
    /// first app was ever asked, and a failover's window was marked reconciled with the others' lost notifications.
    @Test func everyAppIsAskedWithItsOwnToken() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { first in
            try await FakeAppStoreServer.withRunning(bundleID: "com.example.other") { second in
                try await TestDatabase.withFresh { db in
                    let pipeline = try LedgerPipeline(db, pki: Self.pki)
                    for (fake, id) in [(first, "41"), (second, "42")] {
                        let missed = try pipeline.signer.signedNotification(
                            type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(),
                            transaction: pipeline.signer.transactionPayload(transactionID: id))
                        await fake.state.setNotificationHistory(
                            [NotificationHistoryItem(signedPayload: missed, sendAttempts: nil)], environment: .sandbox)
                    }
                    let reconciler = Reconciler(
                        client: db.client,
                        appStores: [
                            try await AppStoreAPIClient(configuration: first.configuration(maximumAttempts: 1)),
                            try await AppStoreAPIClient(configuration: second.configuration(maximumAttempts: 1)),
                        ],
                        environments: [.sandbox]
                    )
                    let result = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                    #expect(result == .init(listed: 2, appended: 2))
                    // Each fake accepted only tokens naming its app, and was asked.
                    for fake in [first, second] {
                        #expect(await fake.state.requests.filter { $0.path == "/inApps/v1/notifications/history" }.map(\.authorized) == [true])
                    }
                    // The first app failing leaves the second's notifications to be found, and the failure is reported.
                    await first.state.inject([.retryable])
                    await second.state.setNotificationHistory([], environment: .sandbox)
                    let error = await #expect(throws: ReconciliationError.self) {
                        try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                    }
                    #expect(error?.failures.map(\.error).allSatisfy { $0.hasPrefix("com.example.app: ") } == true)
                    #expect(await second.state.requests.filter { $0.path == "/inApps/v1/notifications/history" }.count == 2)
                }
            }
        }
    }

    /// Apple keeps 180 days of history in production and 30 in the sandbox, and refuses an older start (4000012): a
    /// window reaching further back (an old database history change, a quiet app) is asked from the oldest day kept.
    @Test func aWindowOlderThanAppleKeepsIsAskedFromItsOldestDay() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                _ = try await missedSandboxNotification(db, fake)
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1)),
                    environments: [.production, .sandbox]
                )
                let now = Date()
                let result = try await reconciler.run(from: now.addingTimeInterval(-400 * 86_400), to: now, onlyFailures: false, logger: db.logger)
                #expect(result.listed == 1 && result.appended == 1)
                // Production was asked from 180 days back, the sandbox from 30: what lies before is said, not passed over.
                let sandbox = try #require(result.unreachable[.sandbox])
                let production = try #require(result.unreachable[.production])
                #expect(abs(sandbox.timeIntervalSince(now.addingTimeInterval(-30 * 86_400 + 3_600))) < 1)
                #expect(abs(production.timeIntervalSince(now.addingTimeInterval(-180 * 86_400 + 3_600))) < 1)
                // A window wholly older than Apple keeps asks nothing.
                let old = try await reconciler.run(
                    from: now.addingTimeInterval(-400 * 86_400), to: now.addingTimeInterval(-300 * 86_400), onlyFailures: false, logger: db.logger)
                #expect(old.listed == 0 && old.appended == 0 && old.unreachable.count == 2)
                #expect(await fake.state.requests.count == 2)
                // A database history change whose window Apple no longer keeps is reconciled with a note saying so.
                try await Self.recordHistoryChange(db, system: "2", previous: "1", lastReceived: "400 days", noticed: "399 days")
                _ = try await reconciler.reconcileHistoryChanges(logger: db.logger)
                #expect(
                    try await Self.isReconciled(
                        db, system: "2", noteLike: "not reconciled: Production before %; Sandbox before %older than Apple keeps%"))
            }
        }
    }

    /// Every notification is asked for without a gap between runs, per app and environment: back to where the last run
    /// that asked that environment successfully ended (kept in the database, so a restarted worker goes on from there),
    /// and over the whole interval when it is longer than the 2 h window. Production failing on every run (before the
    /// app's first release) holds back only itself. Before, each run asked for the last 2 h only, so with an interval
    /// of 3 h, after runs failing for longer than 2 h, or across a restart, stretches were never asked.
    @Test func everyNotificationIsAskedForWithoutAGap() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                await fake.state.setProductionUnreleased(true)
                func service() async throws -> ReconcilerService {
                    ReconcilerService(
                        reconciler: Reconciler(
                            client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1)),
                            environments: [.production, .sandbox]),
                        interval: .seconds(3 * 3600), logger: db.logger
                    )
                }
                func everyNotificationWindow(_ environment: AppStoreAPIHost) async -> NotificationHistoryRequest? {
                    await fake.state.historyRequests.filter { $0.environment == environment && $0.request.onlyFailures != true }.last?.request
                }
                func milliseconds(_ date: Date) -> Int64 { Int64(date.timeIntervalSince1970 * 1000) }
                let start = Date()
                // Production fails (401), the sandbox is asked: over the interval (3 h, longer than the 2 h window) and a margin.
                let first = try await service()
                #expect(await first.runOnce(now: start) == 2)
                #expect(await everyNotificationWindow(.sandbox)?.startDate == milliseconds(start.addingTimeInterval(-3 * 3600 - 600)))
                // The next run, by another worker (or after a restart): the sandbox from where the last run ended, less the
                // margin (Production, never asked successfully, is asked over the recent window: it records nothing).
                let next = start.addingTimeInterval(3 * 3600)
                let second = try await service()
                #expect(await second.runOnce(now: next) == 2)
                #expect(await everyNotificationWindow(.sandbox)?.startDate == milliseconds(start.addingTimeInterval(-600)))
                // A run whose sandbox requests fail too (both of them) records nothing: the run after asks from the last
                // sandbox success.
                await fake.state.inject([.retryable, .retryable])
                #expect(await second.runOnce(now: next.addingTimeInterval(3 * 3600)) == 2)
                let later = next.addingTimeInterval(6 * 3600)
                #expect(await second.runOnce(now: later) == 2)
                let last = await everyNotificationWindow(.sandbox)
                #expect(last?.startDate == milliseconds(next.addingTimeInterval(-600)))
                #expect(last?.endDate == milliseconds(later))
                #expect(
                    try await db.scalar(
                        "SELECT count(*) FROM reconciliation_coverage WHERE bundle_id = 'com.example.app' AND environment = 'Sandbox'")
                        == 1)
                // Production, failing since the first run, kept that run's start: once it answers, it is asked from there.
                let production = try await db.client.query(
                    "SELECT covered_until FROM reconciliation_coverage WHERE environment = 'Production'", logger: db.logger
                ).decode(Date.self).readToEnd()
                #expect(production.map(milliseconds) == [milliseconds(start.addingTimeInterval(-3 * 3600 - 600))])
            }
        }
    }

    /// A database history change whose window fails does not keep the periodic windows from running.
    @Test func aFailingStepDoesNotStopTheOthers() async throws {
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                _ = try await missedSandboxNotification(db, fake)
                try await db.client.query(
                    """
                    INSERT INTO database_history (system_identifier, timeline, previous_system_identifier, previous_timeline, last_received_at, event_id_floor)
                    VALUES ('2', 1, '1', 1, now() - interval '1 hour', 0)
                    """, logger: db.logger)
                // The history change's request (the run's first) fails; the periodic windows' requests succeed.
                await fake.state.inject([.init(status: 400, appleErrorCode: 4_000_000)])
                let service = ReconcilerService(
                    reconciler: Reconciler(
                        client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1)),
                        environments: [.sandbox]),
                    interval: .seconds(3600), logger: db.logger
                )
                let firstRun = await service.runOnce(now: Date())
                let paths = await fake.state.requests.map(\.path)
                #expect(firstRun == 1, "\(paths)")
                #expect(try await db.scalar("SELECT count(*) FROM events WHERE source = 'reconciliation'") == 1)
                #expect(
                    try await db.scalar(
                        "SELECT count(*) FROM database_history WHERE system_identifier = '2' AND reconciled_at IS NULL AND last_reconcile_error IS NOT NULL"
                    ) == 1)
                // The next run reconciles the change.
                #expect(await service.runOnce(now: Date()) == 0)
                #expect(
                    try await db.scalar(
                        "SELECT count(*) FROM database_history WHERE system_identifier = '2' AND reconciled_at IS NOT NULL AND last_reconcile_error IS NULL"
                    ) == 1)
            }
        }
    }
}
