import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Console: charts and their CSV against hand-computed numbers")
struct ConsoleChartTests {
    /// A CSV field a spreadsheet would run as a formula gets a leading `'` (OWASP's list: `=`, `+`, `-`, `@`, tab,
    /// carriage return; numbers stay numbers), and quoting goes by scalar: a quote followed by a combining mark is
    /// still a quote to the reader.
    @Test func csvFieldsAreGuardedAndQuotedScalarByScalar() {
        #expect(ChartTable.csvField("=1+1") == "'=1+1")
        #expect(ChartTable.csvField("@SUM(A1)") == "'@SUM(A1)")
        #expect(ChartTable.csvField("\tcmd") == "'\tcmd")
        #expect(ChartTable.csvField("-5") == "-5")
        #expect(ChartTable.csvField("com.example.monthly") == "com.example.monthly")
        let accented = "\"\u{301}x"
        let quoted = "\"\"\"\u{301}x\""
        #expect(ChartTable.csvField(accented) == quoted)
        #expect(ChartTable.csvField("a,b") == "\"a,b\"")
    }

    /// 2024-01-10 00:00 UTC.
    static let january10: Int64 = 1_704_844_800_000
    static let day: Int64 = 86_400_000

    /// A tiny business in Sandbox, every figure below computed by hand:
    /// - A (90001, 9.99 USD monthly, 30-day periods): bought 2024-01-10, renewed 02-09 and 03-10, auto-renew off,
    ///   expired 04-09.
    /// - B (91001, 9.99 USD): bought 2024-02-15, refunded 2024-02-20 (access ends at the refund).
    func withBusiness(
        configure: @Sendable @escaping (inout ConsoleController) -> Void = { _ in },
        _ body: @Sendable @escaping (ConsoleBrowser) async throws -> Void
    ) async throws {
        try await withBusiness(configure: configure) { _, browser in try await body(browser) }
    }

    /// ``withBusiness(configure:_:)`` that also hands the body the database.
    func withBusiness(
        configure: @Sendable @escaping (inout ConsoleController) -> Void = { _ in },
        _ body: @Sendable @escaping (TestDatabase, ConsoleBrowser) async throws -> Void
    ) async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            var a = SubscriptionLifecycleBuilder(originalTransactionID: "90001", start: Timestamp(millisecondsSince1970: Double(Self.january10)))
            a.subscribe()
            a.renew()
            a.renew()
            a.setAutoRenew(false)
            a.expire()
            var b = SubscriptionLifecycleBuilder(
                originalTransactionID: "91001", start: Timestamp(millisecondsSince1970: Double(Self.january10 + 36 * Self.day)),
                appAccountToken: nil
            )
            b.subscribe()
            b.advance(by: 5 * Self.day)
            b.refund()
            try await pipeline.append(a.facts + b.facts)
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == a.facts.count + b.facts.count)
            #expect(
                try await ConsoleUserStore(client: db.client).create(
                    name: "fran", role: .viewer, passwordHash: try ConsolePassword.hash("pw", rounds: 1_000), logger: db.logger
                ))
            var console = try ConsoleController(configuration: ConsoleConfiguration(enabled: true), client: db.client)
            configure(&console)
            let router = AdminApplication.router(
                registry: PrometheusCollectorRegistry(), client: db.client, migrator: Migrator(migrations: try Migration.bundled()), console: console
            )
            try await Application(router: router).test(.router) { client in
                let browser = ConsoleBrowser(client)
                #expect(try await browser.signIn("fran", "pw").status == .seeOther)
                try await body(db, browser)
            }
        }
    }

    static let filters = "?from=2024-01&to=2024-04&environment=Sandbox"

    static let expected: [String: String] = [
        "active-subscriptions": """
        month,paid,trials
        2024-01,1,0
        2024-02,1,0
        2024-03,1,0
        2024-04,0,0
        """,
        "mrr": """
        month,currency,mrr
        2024-01,USD,9.99
        2024-02,USD,9.99
        2024-03,USD,9.99
        2024-04,,0.00
        """,
        "churn": """
        month,active_at_start,churned,churn_rate
        2024-01,0,0,
        2024-02,1,0,0.0000
        2024-03,1,0,0.0000
        2024-04,1,1,1.0000
        """,
        "refunds": """
        month,currency,refunds,amount
        2024-01,,0,0.00
        2024-02,USD,1,9.99
        2024-03,,0,0.00
        2024-04,,0,0.00
        """,
        "trial-conversion": """
        month,trials,converted,pending,abandoned,conversion_rate
        2024-01,0,0,0,0,
        2024-02,0,0,0,0,
        2024-03,0,0,0,0,
        2024-04,0,0,0,0,
        """,
        "new-vs-renewing": """
        month,new,renewing
        2024-01,1,0
        2024-02,1,1
        2024-03,0,1
        2024-04,0,0
        """,
    ]

    @Test func eachCSVMatchesTheHandComputedFigures() async throws {
        try await withBusiness { browser in
            for (name, table) in Self.expected {
                let response = try await browser.get("/console/charts/\(name).csv\(Self.filters)")
                #expect(response.status == .ok, "\(name)")
                #expect(response.headers[.contentType] == "text/csv; charset=utf-8")
                #expect(response.headers[.contentDisposition] == "attachment; filename=\"\(name).csv\"")
                #expect(response.html == table.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n", "\(name)")
            }
            // Filters restrict: another product, app or environment has nothing.
            for filter in ["&product=com.example.other", "&app=com.example.other"] {
                let response = try await browser.get("/console/charts/active-subscriptions.csv\(Self.filters)\(filter)")
                #expect(response.html == "month,paid,trials\r\n2024-01,0,0\r\n2024-02,0,0\r\n2024-03,0,0\r\n2024-04,0,0\r\n", "\(filter)")
            }
            let production = try await browser.get("/console/charts/new-vs-renewing.csv?from=2024-01&to=2024-02&environment=Production")
            #expect(production.html == "month,new,renewing\r\n2024-01,0,0\r\n2024-02,0,0\r\n")
            let matching = try await browser.get("/console/charts/new-vs-renewing.csv\(Self.filters)&app=com.example.app&product=com.example.monthly")
            #expect(matching.html == Self.expected["new-vs-renewing"]!.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n")
            #expect(try await browser.get("/console/charts/nothing.csv").status == .notFound)
        }
    }

    @Test func theChartsPageDrawsEveryChartWithATableAndItsCSVLink() async throws {
        try await withBusiness { browser in
            let page = try await browser.get("/console/charts\(Self.filters)")
            #expect(page.status == .ok)
            let html = page.html
            #expect(html.contains(#"<form id="chart-filters" class="inline card" method="get" action="/console/charts">"#))
            for name in ["from", "to", "app", "environment", "product"] { #expect(html.contains(#"name="\#(name)""#), "\(name)") }
            #expect(html.contains(#"name="from" type="text" inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}" size="8" value="2024-01""#))
            for name in ConsoleTests.chartNames {
                let start = try #require(html.range(of: #"<figure class="chart" data-chart="\#(name)">"#), "\(name)")
                let figure = String(html[start.lowerBound...].prefix { _ in true }.split(separator: "</figure>", maxSplits: 1)[0])
                #expect(figure.contains("<svg"), "\(name)")
                #expect(figure.contains("data-value=\""), "\(name)")
                #expect(figure.contains(#"<details class="chart-table">"#), "\(name)")
                #expect(
                    figure.contains(#"<a class="chart-csv" href="/console/charts/\#(name).csv?from=2024-01&amp;to=2024-04&amp;environment=Sandbox""#),
                    "\(name)")
            }
            // The drawn values are the table's: MRR has one mark per month, 9.99 three times then 0.
            let mrr = String(html[html.range(of: #"data-chart="mrr""#)!.lowerBound...].split(separator: "</figure>", maxSplits: 1)[0])
            let values = try ConsoleCustomerTests.captures(#"<rect class="series-[0-9]+" [^>]*data-value="([^"]+)""#, in: mrr)
            #expect(values == ["9.99", "9.99", "9.99", "0"])
            #expect(mrr.contains("<td>2024-02</td><td>USD</td><td>9.99</td>"))
            // A malformed month falls back and says so.
            let bad = try await browser.get("/console/charts?from=2024-13&to=2024-04")
            #expect(bad.html.contains(#"id="filter-error""#))
            #expect(bad.html.contains("from=2024-13 is not a month"))
            // An environment in another case is the same environment; an unknown one is said, not drawn as zeros.
            let lower = Self.figure("mrr", in: try await browser.get("/console/charts?from=2024-01&to=2024-04&environment=sandbox").html)
            #expect(try ConsoleCustomerTests.captures(#"<rect class="series-[0-9]+" [^>]*data-value="([^"]+)""#, in: lower) == values)
            let unknown = try await browser.get("/console/charts?from=2024-01&to=2024-04&environment=staging")
            #expect(unknown.html.contains("environment=staging is not Production, Sandbox, Xcode, LocalTesting or all: Production is shown"))
        }
    }

    /// Sandbox purchases are not revenue: with no environment chosen the charts show Production's (this business is
    /// all Sandbox: zeros), its links and form say so, and `all` adds every environment together.
    @Test func withNoEnvironmentChosenTheChartsShowProductionAndAllIsAsked() async throws {
        try await withBusiness { browser in
            let page = try await browser.get("/console/charts?from=2024-01&to=2024-04").html
            #expect(page.contains(#"id="environment" name="environment" type="text" list="environments" value="Production""#))
            #expect(page.contains(#"href="/console/charts/mrr.csv?from=2024-01&amp;to=2024-04&amp;environment=Production""#))
            let bars = #"<rect class="series-[0-9]+" [^>]*data-value="([^"]+)""#
            #expect(try ConsoleCustomerTests.captures(bars, in: Self.figure("mrr", in: page)) == ["0", "0", "0", "0"])
            let defaulted = try await browser.get("/console/charts/new-vs-renewing.csv?from=2024-01&to=2024-04").html
            #expect(defaulted == "month,new,renewing\r\n2024-01,0,0\r\n2024-02,0,0\r\n2024-03,0,0\r\n2024-04,0,0\r\n")
            let all = try await browser.get("/console/charts?from=2024-01&to=2024-04&environment=ALL").html
            #expect(all.contains(#"value="all""#))
            #expect(all.contains(#"href="/console/charts/mrr.csv?from=2024-01&amp;to=2024-04&amp;environment=all""#))
            #expect(try ConsoleCustomerTests.captures(bars, in: Self.figure("mrr", in: all)) == ["9.99", "9.99", "9.99", "0"])
            let allCSV = try await browser.get("/console/charts/new-vs-renewing.csv?from=2024-01&to=2024-04&environment=all").html
            #expect(allCSV == Self.expected["new-vs-renewing"]!.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n")
        }
    }
}

extension ConsoleChartTests {
    /// `date` as the console writes times (`2026-11-24 21:05:09 UTC`).
    static func utcTime(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let p = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d:%02d UTC", p.year!, p.month!, p.day!, p.hour!, p.minute!, p.second!)
    }

    /// One chart's `figure` element on `html`.
    static func figure(_ name: String, in html: String) -> String {
        guard let start = html.range(of: #"<figure class="chart" data-chart="\#(name)">"#) else { return "" }
        return String(html[start.lowerBound...].split(separator: "</figure>", maxSplits: 1)[0])
    }

    @Test func theMRRChartDrawsAMonthWithoutSubscriptionsAsZeroOfItsCurrencyNotAsASeriesOfItsOwn() async throws {
        try await withBusiness { browser in
            let mrr = Self.figure("mrr", in: try await browser.get("/console/charts\(Self.filters)").html)
            // 2024-04 has no active subscription: a 0 of the USD series, and the legend names USD only.
            #expect(try ConsoleCustomerTests.captures(#"data-series="([^"]*)""#, in: mrr) == ["USD", "USD", "USD", "USD"])
            #expect(mrr.contains(#"data-value="0" data-label="2024-04" data-series="USD""#))
            #expect(try ConsoleCustomerTests.captures(#"<text x="[0-9.]+" y="15">([^<]*)</text>"#, in: mrr) == ["USD"])
            #expect(!mrr.contains("—"))
            // A range without any subscription: one series named MRR, zeros.
            let empty = Self.figure("mrr", in: try await browser.get("/console/charts?from=2023-01&to=2023-02").html)
            #expect(try ConsoleCustomerTests.captures(#"data-series="([^"]*)""#, in: empty) == ["MRR", "MRR"])
        }
    }

    @Test func withoutASnapshotOfALargeLedgerThePageSaysTheChartsAreBeingPreparedInsteadOfComputingThem() async throws {
        // As if the ledger were large: no first snapshot is taken while a page waits.
        let large: @Sendable (inout ConsoleController) -> Void = { $0.firstSnapshotWaitTransactions = 0 }
        try await withBusiness(configure: large) { db, browser in
            let page = try await browser.get("/console/charts\(Self.filters)")
            #expect(page.status == .ok)
            #expect(page.html.contains(#"<p id="charts-preparing" class="notice" role="status">The charts are being prepared"#))
            #expect(page.html.contains(#"<span id="computed-at">never</span>"#))
            for name in ConsoleTests.chartNames { #expect(Self.figure(name, in: page.html).contains("<svg"), "\(name)") }
            let csv = try await browser.get("/console/charts/mrr.csv\(Self.filters)")
            #expect(csv.status == .serviceUnavailable)
            #expect(csv.headers[.retryAfter] == "60")
            #expect(try await db.scalar("SELECT count(*) FROM console_chart_snapshot") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM console_chart_months") == 0)
            // Once the background refresher has taken it, the same page shows the numbers, as of then.
            #expect(try await ChartStore(client: db.client).refresh(logger: db.logger))
            let ready = try await browser.get("/console/charts\(Self.filters)")
            #expect(!ready.html.contains("charts-preparing"))
            #expect(Self.figure("mrr", in: ready.html).contains("<td>2024-02</td><td>USD</td><td>9.99</td>"))
        }
    }

    @Test func aSnapshotThatTookLongIsShownAsOfItsTimeAndNotRetakenWhileThePageWaits() async throws {
        // As if the ledger were large.
        let large: @Sendable (inout ConsoleController) -> Void = { $0.firstSnapshotWaitTransactions = 0 }
        try await withBusiness(configure: large) { db, browser in
            let (store, before) = try await Self.slowOutdatedSnapshot(db)
            let page = try await browser.get("/console/charts\(Self.filters)")
            #expect(page.status == .ok)
            let asOf = Self.utcTime(before)
            #expect(page.html.contains(#"<span id="computed-at">\#(asOf)</span>"#))
            #expect(page.html.contains(#"<span id="charts-behind">"#))
            for name in ConsoleTests.chartNames {
                #expect(Self.figure(name, in: page.html).contains(#"<span class="muted as-of">as of \#(asOf)</span>"#), "\(name)")
            }
            #expect(try await store.snapshot(logger: db.logger).takenAt == before)
            // The sums it shows are the snapshot's.
            #expect(Self.figure("mrr", in: page.html).contains("<td>2024-02</td><td>USD</td><td>9.99</td>"))
        }
    }
}

extension ConsoleChartTests {
    /// Takes a chart snapshot, then makes it look as if it had taken a minute (a large ledger or a busy machine) an hour
    /// ago and events had arrived since; returns the store and when it was taken.
    static func slowOutdatedSnapshot(_ db: TestDatabase) async throws -> (ChartStore, Date) {
        let store = ChartStore(client: db.client)
        #expect(try await store.refresh(logger: db.logger))
        try await db.client.query(
            "UPDATE console_chart_snapshot SET duration_ms = 60000, last_event_id = 0, refreshed_at = refreshed_at - interval '1 hour'",
            logger: db.logger
        )
        return (store, try #require(try await store.snapshot(logger: db.logger).takenAt))
    }

    @Test func onASmallLedgerAnOutdatedSnapshotIsRetakenWhileThePageWaitsHoweverLongTheLastTook() async throws {
        try await withBusiness { db, browser in
            let (store, before) = try await Self.slowOutdatedSnapshot(db)
            let page = try await browser.get("/console/charts\(Self.filters)")
            #expect(page.status == .ok)
            let after = try await store.snapshot(logger: db.logger)
            #expect(try #require(after.takenAt) > before)
            #expect(!after.behind)
            #expect(!page.html.contains("charts-behind"))
        }
    }
}

extension ConsoleTests {
    /// The charts the contract names.
    static let chartNames = ["active-subscriptions", "mrr", "churn", "refunds", "trial-conversion", "new-vs-renewing"]
}

@Suite("Console: the charts' snapshot queries give the analytics views' numbers")
struct ConsoleChartViewAgreementTests {
    /// Sums the view's rows per month: `SELECT to_char(month,'YYYY-MM'), a, b, … FROM …` as text columns joined by spaces.
    func perMonth(_ db: TestDatabase, _ sql: String) async throws -> [String: [Int]] {
        var result: [String: [Int]] = [:]
        let rows = try await db.client.query(PostgresQuery(unsafeSQL: sql), logger: db.logger).decode(String.self)
        for try await line in rows {
            let parts = line.split(separator: " ")
            let values = parts.dropFirst().map { Int(Double($0)!.rounded()) }
            result[String(parts[0]), default: Array(repeating: 0, count: values.count)] = zip(
                result[String(parts[0])] ?? values.map { _ in 0 }, values
            ).map(+)
        }
        return result
    }

    @Test func activeMRRChurnTrialsStartsAndRefundsMatchTheViewsOnTheSyntheticBusiness() async throws {
        try await SyntheticBusinessTests().withBusiness { db in
            let store = ChartStore(client: db.client)
            #expect(try await store.refresh(logger: db.logger))
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let filter = ChartFilter(
                fromMonth: calendar.date(from: DateComponents(year: 2025, month: 1, day: 1))!,
                toMonth: calendar.date(from: DateComponents(year: 2025, month: 6, day: 1))!, environment: "Production"
            )
            let month = { (date: Date) -> String in
                let parts = calendar.dateComponents([.year, .month], from: date)
                return String(format: "%04d-%02d", parts.year!, parts.month!)
            }

            let activity = try await store.activity(filter, logger: db.logger)
            let mrrView = try await perMonth(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || paid_subscriptions || ' ' || round(mrr * 100) FROM analytics.mrr_by_month
                WHERE environment = 'Production' AND month BETWEEN '2025-01-01' AND '2025-06-01'
                """)
            for row in activity where row.currency != nil {
                #expect([row.paid, Int((row.mrr * 100).rounded())] == mrrView[month(row.month)], "\(month(row.month))")
            }
            #expect(activity.filter { $0.currency != nil }.count == 6)

            let churn = try await store.churn(filter, logger: db.logger)
            let churnView = try await perMonth(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || active_at_start || ' ' || churned FROM analytics.monthly_churn
                WHERE environment = 'Production' AND month BETWEEN '2025-01-01' AND '2025-06-01'
                """)
            for row in churn { #expect([row.activeAtStart, row.churned] == (churnView[month(row.month)] ?? [0, 0]), "\(month(row.month))") }

            let trials = try await store.trials(filter, logger: db.logger)
            let trialView = try await perMonth(
                db,
                """
                SELECT to_char(cohort_month, 'YYYY-MM') || ' ' || trials || ' ' || converted || ' ' || pending || ' ' || abandoned
                FROM analytics.trial_conversion WHERE environment = 'Production' AND cohort_month BETWEEN '2025-01-01' AND '2025-06-01'
                """)
            for row in trials {
                #expect(
                    [row.trials, row.converted, row.pending, row.abandoned] == (trialView[month(row.month)] ?? [0, 0, 0, 0]), "\(month(row.month))")
            }
            #expect(trials.map(\.trials).reduce(0, +) == 6)

            let starts = try await store.starts(filter, logger: db.logger)
            let newView = try await perMonth(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || new_subscriptions FROM analytics.new_subscriptions_by_month
                WHERE environment = 'Production' AND month BETWEEN '2025-01-01' AND '2025-06-01'
                """)
            for row in starts { #expect([row.new] == (newView[month(row.month)] ?? [0]), "\(month(row.month))") }

            let refunds = try await store.refunds(filter, logger: db.logger)
            let refundView = try await perMonth(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || refunds_in_month || ' ' || round(refunded_amount_in_month * 100)
                FROM analytics.refund_rate_by_month WHERE environment = 'Production' AND month BETWEEN '2025-01-01' AND '2025-06-01'
                """)
            var refundsPerMonth: [String: [Int]] = [:]
            for row in refunds {
                refundsPerMonth[month(row.month), default: [0, 0]][0] += row.refunds
                refundsPerMonth[month(row.month), default: [0, 0]][1] += Int((row.amount * 100).rounded())
            }
            for (key, value) in refundsPerMonth { #expect(value == (refundView[key] ?? [0, 0]), "\(key)") }
            #expect(refunds.map(\.refunds).reduce(0, +) >= 2)
        }
    }
}
