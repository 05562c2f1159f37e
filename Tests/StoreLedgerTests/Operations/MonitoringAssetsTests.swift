import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerWorker
import Testing

/// The Grafana dashboard (`deploy/grafana/storeledger.json`) and the Prometheus alert rules
/// (`deploy/prometheus/alerts.yml`): well formed, and naming only metrics a real admin port exports.
/// Serialized: the gauges are process-wide, and two tests sampling different databases would race.
@Suite("Monitoring: the Grafana dashboard and the alert rules in deploy/", .serialized)
struct MonitoringAssetsTests {
    /// The signing PKI of the notifications these tests send.
    static let pki = try! TestPKI()
    /// The repository's root.
    static let repository = ThrowawayCluster.repositoryRoot
    /// The dashboard, relative to the root.
    static let dashboardPath = "deploy/grafana/storeledger.json"
    /// The alert rules, relative to the root.
    static let alertsPath = "deploy/prometheus/alerts.yml"

    // MARK: every metric named is exported

    @Test func everyMetricTheDashboardAndTheAlertsNameIsOneTheAdminPortExports() async throws {
        let dashboardMetrics = try Self.metricNames(in: Self.dashboardExpressions())
        let alertMetrics = try Self.metricNames(in: Self.alertRules().map(\.expr))
        // The issue's signals are all covered (a rename in the files would otherwise pass by naming nothing).
        for required in [
            "storeledger_queue_oldest_pending_seconds", "storeledger_worker_events_total", "hb_requests",
            "storeledger_webhook_deliveries_total", "storeledger_reconciliation_appended_total",
            "storeledger_http_request_timeouts_total", "storeledger_database_history_unreconciled_changes",
            "storeledger_queue_oldest_unfinished_seconds", "storeledger_database_notify_queue_usage",
        ] {
            #expect(alertMetrics.contains(required), "no alert on \(required)")
            #expect(dashboardMetrics.contains(required), "no panel on \(required)")
        }

        _ = AdminPortTests.registry  // bootstraps swift-metrics before any metric is created
        let exported = try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                try await Self.exerciseEveryMetric(db, fake: fake)
                return Self.sampleNames(inExposition: try await Self.scrapeLiveAdminPort(db))
            }
        }
        for name in dashboardMetrics.sorted() {
            #expect(exported.contains(name), "the dashboard names \(name), which /metrics does not export")
        }
        for name in alertMetrics.sorted() {
            #expect(exported.contains(name), "the alert rules name \(name), which /metrics does not export")
        }
    }

    // MARK: the metrics added for the alerts

    @Test func reconciliationCountsTheMissedNotificationsItAppends() async throws {
        _ = AdminPortTests.registry
        try await FakeAppStoreServer.withRunning(bundleID: "com.example.app") { fake in
            try await TestDatabase.withFresh { db in
                let pipeline = try LedgerPipeline(db, pki: Self.pki)
                let signer = pipeline.signer
                let received = try signer.signedNotification(
                    type: "DID_RENEW", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "21")
                )
                let missed = try signer.signedNotification(
                    type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(), transaction: signer.transactionPayload(transactionID: "22")
                )
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(received)"}"#)
                try await pipeline.drain()
                await fake.state.setNotificationHistory(
                    [received, missed].map { NotificationHistoryItem(signedPayload: $0, sendAttempts: nil) }, environment: .sandbox
                )
                let reconciler = Reconciler(
                    client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox]
                )
                let sample = #"storeledger_reconciliation_appended_total{environment="sandbox"}"#
                // Exported from the reconciler's creation on, so Prometheus sees the first append as growth.
                let before = try #require(Self.value(of: sample, in: try await Self.scrape(db)))
                let result = try await reconciler.run(from: Date().addingTimeInterval(-3600), to: Date(), onlyFailures: false, logger: db.logger)
                #expect(result.appended == 1)
                let after = try #require(Self.value(of: sample, in: try await Self.scrape(db)))
                // Other suites may reconcile in parallel: the counter grows by at least what this run appended.
                #expect(after >= before + 1)
            }
        }
    }

    /// A database that goes silent (its backend stopped) no longer stops the sampling for good: a sample gives up after
    /// the service's timeout, and the next one is taken once the database answers again.
    @Test func queueMetricsGiveUpOnASilentDatabaseAndGoOn() async throws {
        try await SilentDatabase.withFreshDatabase { db in
            try await TestDatabase.withClient(db.url, maximumConnections: 1) { client in
                let patient = QueueMetricsService(client: client, timeout: .seconds(60), logger: db.logger)
                let impatient = QueueMetricsService(client: client, timeout: .seconds(2), logger: db.logger)
                try await patient.sampleWithinTimeout()
                try await SilentDatabase.expectGivesUp("the sample", on: client, logger: db.logger) { try await impatient.sampleWithinTimeout() }
                try await patient.sampleWithinTimeout()
            }
        }
    }

    @Test func queueMetricsPublishUnreconciledDatabaseHistoryChanges() async throws {
        _ = AdminPortTests.registry
        try await TestDatabase.withFresh { db in
            let service = QueueMetricsService(client: db.client, logger: db.logger)
            let sample = "storeledger_database_history_unreconciled_changes"
            try await service.sample()
            #expect(Self.value(of: sample, in: try await Self.scrape(db)) == 0)
            // A failover noticed: a history row with a previous history, not reconciled yet.
            _ = try await db.scalar(
                """
                INSERT INTO database_history (system_identifier, timeline, previous_system_identifier, previous_timeline, event_id_floor)
                VALUES ('7000000000000000001', 2, '7000000000000000001', 1, 1000) RETURNING id
                """
            )
            try await service.sample()
            #expect(Self.value(of: sample, in: try await Self.scrape(db)) == 1)
            let change = try #require(try await DatabaseHistory(client: db.client).changes(unreconciledOnly: true, logger: db.logger).first)
            try await DatabaseHistory(client: db.client).markReconciled(change.id, by: "test", logger: db.logger)
            try await service.sample()
            #expect(Self.value(of: sample, in: try await Self.scrape(db)) == 0)
            #expect(Self.value(of: #"storeledger_queue_depth{state="pending"}"#, in: try await Self.scrape(db)) == 0)
        }
    }

    // MARK: the files' shape

    @Test func theDashboardIsAGrafanaDashboardOverATemplatedPrometheusDatasource() throws {
        let text = try String(contentsOf: Self.repository.appendingPathComponent(Self.dashboardPath), encoding: .utf8)
        #expect(!text.contains("http://") && !text.contains("https://"), "no external links or resources")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(dashboard["title"] as? String == "StoreLedger")
        #expect(dashboard["uid"] as? String == "storeledger")
        #expect((dashboard["schemaVersion"] as? Int ?? 0) >= 36)
        #expect((dashboard["links"] as? [Any])?.isEmpty ?? true)
        let variables = try #require((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]])
        let datasource = try #require(variables.first { $0["name"] as? String == "datasource" })
        #expect(datasource["type"] as? String == "datasource")
        #expect(datasource["query"] as? String == "prometheus")

        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let ids = panels.compactMap { $0["id"] as? Int }
        #expect(ids.count == panels.count && Set(ids).count == ids.count, "every panel has a unique id")
        let graphs = panels.filter { $0["type"] as? String != "row" }
        #expect(graphs.count >= 10)
        for panel in graphs {
            let title = panel["title"] as? String ?? "?"
            #expect(["timeseries", "stat"].contains(panel["type"] as? String), "\(title)")
            #expect(panel["gridPos"] is [String: Any], "\(title)")
            #expect(Self.isTemplatedPrometheus(panel["datasource"]), "\(title): datasource must be ${datasource}")
            let targets = panel["targets"] as? [[String: Any]] ?? []
            #expect(!targets.isEmpty, "\(title) has no query")
            #expect(Set(targets.compactMap { $0["refId"] as? String }).count == targets.count, "\(title): unique refIds")
            for target in targets {
                #expect(Self.isTemplatedPrometheus(target["datasource"]), "\(title): target datasource must be ${datasource}")
                #expect(!(target["expr"] as? String ?? "").isEmpty, "\(title): empty expr")
            }
        }
    }

    @Test func theAlertRulesAreRegularYAMLEachWithSeverityAndARunbookLineDocumented() throws {
        let rules = try Self.alertRules()
        #expect(Set(rules.map(\.name)).count == rules.count, "alert names are unique")
        for required in [
            "StoreLedgerOldestPendingEventOld", "StoreLedgerDeadEventsGrowing", "StoreLedgerRejectedEventsGrowing", "StoreLedgerReceiverErrors",
            "StoreLedgerWebhookDeliveriesFailed", "StoreLedgerReconciliationFoundMissedNotifications", "StoreLedgerWorkersStoppedCompleting",
            "StoreLedgerRequestTimeouts", "StoreLedgerDatabaseHistoryChanged",
        ] {
            #expect(rules.contains { $0.name == required }, "missing alert \(required)")
        }
        let operations = try String(contentsOf: Self.repository.appendingPathComponent("docs/operations.md"), encoding: .utf8)
        for rule in rules {
            #expect(["warning", "critical"].contains(rule.labels["severity"]), "\(rule.name): severity")
            for key in ["summary", "description", "runbook"] {
                #expect(!(rule.annotations[key] ?? "").isEmpty, "\(rule.name): annotation \(key)")
            }
            let documented = operations.contains("`\(rule.name)`")
            #expect(documented, "\(rule.name) has no runbook line in docs/operations.md")
        }
    }

    @Test(.enabled(if: promtool != nil, "promtool is not installed (Debian: apt-get install prometheus); skipping promtool's checks"))
    func promtoolAcceptsTheAlertRulesAndTheirUnitTestsPass() throws {
        let rules = try Self.alertRules()
        let check = try Self.runPromtool(["check", "rules", Self.alertsPath])
        #expect(check.status == 0, "\(check.output)")
        #expect(check.output.contains("SUCCESS: \(rules.count) rules found"), "\(check.output)")
        // deploy/prometheus/alerts.test.yml: each alert quiet before its condition has lasted, firing after.
        let unitTests = try String(contentsOf: Self.repository.appendingPathComponent("deploy/prometheus/alerts.test.yml"), encoding: .utf8)
        for rule in rules {
            let tested = unitTests.contains("alertname: \(rule.name)\n")
            #expect(tested, "\(rule.name) has no unit test in alerts.test.yml")
        }
        let run = try Self.runPromtool(["test", "rules", "deploy/prometheus/alerts.test.yml"])
        #expect(run.status == 0 && run.output.contains("SUCCESS"), "\(run.output)")
    }
}

extension MonitoringAssetsTests {
    /// One alerting rule as read from the rules file.
    struct AlertRule {
        /// `alert:`.
        var name: String
        /// `expr:`.
        var expr = ""
        /// `for:`, if given.
        var duration: String?
        /// `labels:`.
        var labels: [String: String] = [:]
        /// `annotations:`, unquoted.
        var annotations: [String: String] = [:]
    }

    /// Where `promtool` is on PATH, if anywhere.
    static let promtool: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        .map { URL(fileURLWithPath: String($0)).appendingPathComponent("promtool") }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }

    /// Runs promtool in the repository with `arguments`; returns its exit status and its output.
    static func runPromtool(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = promtool
        process.arguments = arguments
        process.currentDirectoryURL = repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Every PromQL expression of the dashboard's panel targets.
    static func dashboardExpressions() throws -> [String] {
        let data = try Data(contentsOf: repository.appendingPathComponent(dashboardPath))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = dashboard["panels"] as? [[String: Any]] ?? []
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(!expressions.isEmpty)
        return expressions
    }

    /// Reads the rules file with a strict line-based reader of the one layout it is written in (Prometheus' own YAML
    /// parser is not a dependency here): `groups:` / `  - name:` / `    rules:` / `      - alert:` with its keys at
    /// 8 spaces (`expr`, `for`, `labels`, `annotations`) and their entries at 10. Any other line is an error.
    static func alertRules() throws -> [AlertRule] {
        let text = try String(contentsOf: repository.appendingPathComponent(alertsPath), encoding: .utf8)
        var rules: [AlertRule] = []
        var section = ""
        var sawGroups = false
        var sawGroup = false
        var sawRules = false
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let where_ = "\(alertsPath):\(number + 1): \(line)"
            if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") { continue }
            #expect(!line.contains("\t"), "tab in \(where_)")
            let indent = line.prefix { $0 == " " }.count
            let content = String(line.dropFirst(indent))
            let (key, value) = splitKey(content)
            switch (indent, key) {
            case (0, "groups"): sawGroups = true
            case (2, "- name"): sawGroup = sawGroups && !value.isEmpty
            case (4, "rules"): sawRules = sawGroup
            case (6, "- alert"):
                #expect(sawRules, "a rule outside groups/rules: \(where_)")
                #expect(value.range(of: "^StoreLedger[A-Z][A-Za-z0-9]+$", options: .regularExpression) != nil, "alert name: \(where_)")
                rules.append(AlertRule(name: value))
            case (8, "expr"):
                #expect(!value.isEmpty && !"{[&*!|>'\"%@`#".contains(value.first!), "a plain single-line expression: \(where_)")
                #expect(!value.contains(": ") && !value.contains(" #"), "no YAML indicators in a plain scalar: \(where_)")
                rules[rules.count - 1].expr = value
            case (8, "for"):
                #expect(value.range(of: "^[0-9]+[smh]$", options: .regularExpression) != nil, "duration: \(where_)")
                rules[rules.count - 1].duration = value
            case (8, "labels"), (8, "annotations"):
                #expect(value.isEmpty, "\(where_)")
                section = key
            case (10, _):
                #expect(!rules.isEmpty && ["labels", "annotations"].contains(section), "\(where_)")
                let unquoted = section == "annotations" ? try #require(doubleQuoted(value), "annotations are double-quoted: \(where_)") : value
                if section == "labels" { rules[rules.count - 1].labels[key] = unquoted } else { rules[rules.count - 1].annotations[key] = unquoted }
            default:
                Issue.record("unexpected line \(where_)")
            }
            if indent < 10 && key != "labels" && key != "annotations" { section = "" }
        }
        #expect(sawRules && !rules.isEmpty, "groups → rules → alerts")
        #expect(rules.allSatisfy { !$0.expr.isEmpty }, "every rule has an expr")
        return rules
    }

    /// `key: value` → (key, value); a key with nothing after the colon has an empty value.
    private static func splitKey(_ content: String) -> (String, String) {
        guard let colon = content.range(of: ":") else { return (content, "") }
        return (String(content[..<colon.lowerBound]), String(content[colon.upperBound...]).trimmingCharacters(in: .whitespaces))
    }

    /// The text of a double-quoted YAML scalar without escapes other than `\"`, or nil.
    private static func doubleQuoted(_ value: String) -> String? {
        guard value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") else { return nil }
        let inner = String(value.dropFirst().dropLast())
        guard !inner.replacingOccurrences(of: "\\\"", with: "").contains("\"") else { return nil }
        return inner.replacingOccurrences(of: "\\\"", with: "\"")
    }

    /// Whether a panel's or target's datasource is the templated Prometheus one.
    static func isTemplatedPrometheus(_ value: Any?) -> Bool {
        guard let datasource = value as? [String: Any] else { return false }
        return datasource["type"] as? String == "prometheus" && datasource["uid"] as? String == "${datasource}"
    }

    /// The metric names in PromQL expressions: StoreLedger's own (`storeledger_…`) and Hummingbird's HTTP metrics
    /// (`hb_…`, `http_server_…`), as written (a histogram's `_bucket` stays: it must be a sample name).
    static func metricNames(in expressions: [String]) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: "(?<![A-Za-z0-9_])(?:storeledger|hb|http_server)_[a-z_]+")
        var names = Set<String>()
        for expression in expressions {
            for match in pattern.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
                names.insert(String(expression[Range(match.range, in: expression)!]))
            }
        }
        return names
    }

    /// The sample names an exposition can hold: each family's name, and for a histogram its `_bucket`, `_sum`
    /// and `_count` (the family names are read from the `# TYPE` lines).
    static func sampleNames(inExposition text: String) -> Set<String> {
        var names = Set<String>()
        for line in text.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            guard parts.count == 4 else { continue }
            let family = String(parts[2])
            names.insert(family)
            if parts[3] == "histogram" || parts[3] == "summary" {
                names.formUnion(["_bucket", "_sum", "_count"].map { family + $0 })
            }
        }
        return names
    }

    /// The value of the sample written exactly `sample` (name and labels) in an exposition.
    static func value(of sample: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(sample + " ") {
            return Double(line.dropFirst(sample.count + 1).split(separator: " ").first ?? "")
        }
        return nil
    }

    /// `GET /metrics` on the admin router over the process-wide registry.
    static func scrape(_ db: TestDatabase) async throws -> String {
        let admin = Application(
            router: AdminApplication.router(
                registry: AdminPortTests.registry, client: db.client, migrator: Migrator(migrations: try Migration.bundled())
            )
        )
        return try await admin.test(.router) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            return String(buffer: response.body)
        }
    }

    /// Starts the real admin server (with its request deadline) on a free port and scrapes `/metrics` over a socket.
    static func scrapeLiveAdminPort(_ db: TestDatabase) async throws -> String {
        let admin = AdminApplication.service(
            host: "127.0.0.1", port: 0, registry: AdminPortTests.registry, client: db.client,
            migrator: Migrator(migrations: try Migration.bundled()), logger: db.logger
        )
        return try await admin.test(.live) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            return String(buffer: response.body)
        }
    }

    /// Drives each code path that owns a metric, so that every metric StoreLedger has is in the registry.
    static func exerciseEveryMetric(_ db: TestDatabase, fake: FakeAppStoreServer) async throws {
        let migrator = Migrator(migrations: try Migration.bundled())
        let pipeline = try LedgerPipeline(db, pki: pki)
        // The public port: a stored and an invalid notification (receiver counters, Hummingbird's HTTP metrics).
        let receiver = Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: .underTest))
        try await receiver.test(.router) { client in
            let stored = try await client.execute(
                uri: "/notifications/apple", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: #"{"signedPayload":"\#(try pipeline.signer.signedNotification(type: "TEST", signedDate: Date()))"}"#)
            )
            #expect(stored.status == .ok)
            let invalid = try await client.execute(
                uri: "/notifications/apple", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{")
            )
            #expect(invalid.status.code >= 400)
        }
        // Verification failures: a notification signed by an untrusted chain, processed by the real handler.
        let forged = TestSigner(pki: try TestPKI(), bundleID: "com.example.app")
        try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(try forged.signedNotification(type: "TEST"))"}"#)
        try await pipeline.drain()
        // The worker's, the webhook dispatcher's and the reconciler's metrics exist from their creation on.
        _ = WorkerService(client: db.client, handler: pipeline.handler, logger: db.logger)
        _ = WebhookDispatcher(client: db.client, logger: db.logger)
        _ = Reconciler(client: db.client, appStore: try await AppStoreAPIClient(configuration: fake.configuration()), environments: [.sandbox])
        // The queue and history gauges.
        try await QueueMetricsService(client: db.client, logger: db.logger).sample()
    }
}
