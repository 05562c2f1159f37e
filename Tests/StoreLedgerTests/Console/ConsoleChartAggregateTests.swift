import Foundation
import PostgresNIO
import StoreLedgerTestSupport
import Testing

@testable import StoreLedgerStore

@Suite("Console: the pre-aggregated charts equal the charts computed over the analytics views, for every filter")
struct ConsoleChartAggregateTests {
    /// The first instant of `year`-`month` (UTC).
    static func month(_ year: Int, _ month: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: 1))!
    }

    /// The first instant of the month `offset` months from now (UTC).
    static func monthFromNow(_ offset: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let now = calendar.dateComponents([.year, .month], from: Date())
        return calendar.date(byAdding: .month, value: offset, to: calendar.date(from: now)!)!
    }

    /// Every chart of `filter` from the aggregate equals the same chart computed over the views.
    func expectAgreement(_ filter: ChartFilter, store: ChartStore, reference: ChartViewReference, db: TestDatabase) async throws {
        let label = "\(filter)"
        #expect(try await store.activity(filter, logger: db.logger) == reference.activity(filter, logger: db.logger), "activity \(label)")
        #expect(try await store.churn(filter, logger: db.logger) == reference.churn(filter, logger: db.logger), "churn \(label)")
        #expect(try await store.refunds(filter, logger: db.logger) == reference.refunds(filter, logger: db.logger), "refunds \(label)")
        #expect(try await store.trials(filter, logger: db.logger) == reference.trials(filter, logger: db.logger), "trials \(label)")
        #expect(try await store.starts(filter, logger: db.logger) == reference.starts(filter, logger: db.logger), "starts \(label)")
    }

    @Test func everyEnvironmentAppAndProductFilterAndDateRangeOnTheSyntheticBusiness() async throws {
        try await SyntheticBusinessTests().withBusiness { db in
            let store = ChartStore(client: db.client)
            let reference = ChartViewReference(client: db.client)
            #expect(try await store.refresh(logger: db.logger))
            #expect(try await db.scalar("SELECT count(*) FROM console_chart_months") > 0)
            let products: [String?] = [
                nil, SyntheticBusiness.monthly, SyntheticBusiness.pro, SyntheticBusiness.yearly, SyntheticBusiness.weekly, "com.example.none",
            ]
            for environment in [nil, "Production", "Sandbox"] {
                for app in [nil, "com.example.app", "com.example.other"] {
                    for product in products {
                        let filter = ChartFilter(
                            fromMonth: Self.month(2025, 1), toMonth: Self.month(2025, 6), app: app, environment: environment, product: product
                        )
                        try await expectAgreement(filter, store: store, reference: reference, db: db)
                    }
                }
            }
            // Ranges before the business, across its start, up to months after now, and far in the future.
            let ranges = [
                (Self.month(2024, 9), Self.month(2025, 2)), (Self.month(2025, 5), Self.monthFromNow(3)), (Self.month(2030, 1), Self.month(2030, 3)),
                (Self.month(2024, 1), Self.month(2024, 3)),
            ]
            for (from, to) in ranges {
                for (environment, app, product) in [
                    (nil, nil, nil), ("Production", "com.example.app", SyntheticBusiness.pro), (nil, nil, SyntheticBusiness.monthly),
                    ("Production", nil, SyntheticBusiness.yearly),
                ] as [(String?, String?, String?)] {
                    let filter = ChartFilter(fromMonth: from, toMonth: to, app: app, environment: environment, product: product)
                    try await expectAgreement(filter, store: store, reference: reference, db: db)
                }
            }
            // The sums are what the figures add up to: the hand-computed June of the business (13 paid, MRR 123.84).
            let june = try await store.activity(
                ChartFilter(fromMonth: Self.month(2025, 6), toMonth: Self.month(2025, 6), environment: "Production"), logger: db.logger
            )
            #expect(june.map(\.paid).reduce(0, +) == 13)
            #expect(june.map(\.mrr).reduce(0, +) == 123.84)
        }
    }

    @Test func aSubscriptionThatChangedProductCountsOnceOverAllProductsAndOncePerProduct() async throws {
        // S14 went monthly -> pro on Mar 20 (an upgrade): at the end of March it is one paid subscription (pro), in
        // the monthly product's chart it is not active any more, in the pro product's it is.
        try await SyntheticBusinessTests().withBusiness { db in
            let store = ChartStore(client: db.client)
            #expect(try await store.refresh(logger: db.logger))
            func paid(_ product: String?) async throws -> Int {
                try await store.activity(
                    ChartFilter(fromMonth: Self.month(2025, 3), toMonth: Self.month(2025, 3), environment: "Production", product: product),
                    logger: db.logger
                ).map(\.paid).reduce(0, +)
            }
            let all = try await paid(nil)
            let perProduct = [
                try await paid(SyntheticBusiness.monthly), try await paid(SyntheticBusiness.pro), try await paid(SyntheticBusiness.yearly),
                try await paid(SyntheticBusiness.weekly),
            ]
            #expect(all == 10)
            #expect(perProduct == [6, 1, 2, 1])
            #expect(perProduct.reduce(0, +) == all)
        }
    }
}
