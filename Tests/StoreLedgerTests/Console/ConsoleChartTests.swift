import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Prometheus
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Console: charts and their CSV against hand-computed numbers")
struct ConsoleChartTests {
    /// 2024-01-10 00:00 UTC.
    static let january10: Int64 = 1_704_844_800_000
    static let day: Int64 = 86_400_000

    /// A tiny business in Sandbox, every figure below computed by hand:
    /// - A (90001, 9.99 USD monthly, 30-day periods): bought 2024-01-10, renewed 02-09 and 03-10, auto-renew off,
    ///   expired 04-09.
    /// - B (91001, 9.99 USD): bought 2024-02-15, refunded 2024-02-20 (access ends at the refund).
    func withBusiness(_ body: @Sendable @escaping (ConsoleBrowser) async throws -> Void) async throws {
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
            #expect(try await ConsoleUserStore(client: db.client).create(
                name: "fran", role: .viewer, passwordHash: try ConsolePassword.hash("pw", rounds: 1_000), logger: db.logger
            ))
            let console = try ConsoleController(configuration: ConsoleConfiguration(enabled: true), client: db.client)
            let router = AdminApplication.router(
                registry: PrometheusCollectorRegistry(), client: db.client, migrator: Migrator(migrations: try Migration.bundled()), console: console
            )
            try await Application(router: router).test(.router) { client in
                let browser = ConsoleBrowser(client)
                #expect(try await browser.signIn("fran", "pw").status == .seeOther)
                try await body(browser)
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
                #expect(figure.contains(#"<a class="chart-csv" href="/console/charts/\#(name).csv?from=2024-01&amp;to=2024-04&amp;environment=Sandbox""#), "\(name)")
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
        }
    }
}

extension ConsoleTests {
    /// The charts the contract names.
    static let chartNames = ["active-subscriptions", "mrr", "churn", "refunds", "trial-conversion", "new-vs-renewing"]
}
