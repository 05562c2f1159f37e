import Foundation
import PostgresNIO
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The analytics views on ``SyntheticBusiness``: 25 subscriptions over January-June 2025, fed as signed Apple
/// notifications through the real handler. Every expected figure below was computed by hand, from the stories in
/// `SyntheticBusiness.build`, before any SQL was run.
///
/// Products (USD): monthly 9.99, pro monthly 14.99, yearly 59.99 (MRR 59.99 / 12 = 4.999167), weekly 2.99
/// (MRR x 4 = 11.96, RevenueCat's 28-day normalisation).
///
/// A month's figures are taken at its end, the first instant of the next month (E1 = Feb 1 00:00 for January).
///
/// ```
/// sub  product        periods (UTC, 2025)                                       E1 E2 E3 E4 E5 E6   (Feb1 Mar1 Apr1 May1 Jun1 Jul1)
/// S01  monthly        Jan10 .. Jul10, monthly                                    M  M  M  M  M  M
/// S02  monthly        Jan20 .. Mar20, expires (voluntary)                        M  M  .  .  .  .
/// S03  yearly         Jan05 .. 2026-Jan05                                        Y  Y  Y  Y  Y  Y
/// S04  yearly         Feb15 .. 2026-Feb15                                        .  Y  Y  Y  Y  Y
/// S05  weekly         Mar03 .. Apr07, weekly                                     .  .  W  .  .  .
/// S06  weekly         May26 .. Jul07, weekly                                     .  .  .  .  W  W
/// S07  monthly        trial Feb03-10, paid Feb10 .. Jul10                        .  M  M  M  M  M
/// S08  monthly        trial Mar05-12, auto-renew off Mar07 (abandoned)           .  .  .  .  .  .
/// S09  monthly        trial Apr02-09, paid Apr09-May09 refunded Apr12            .  .  .  .  .  .
/// S10  monthly        Apr06-May06 expires, resubscribes May20 .. Jul20           .  .  .  M  M  M
/// S11  monthly        Jan10 .. Mar10, grace to Apr07, recovered Mar28-Apr10      M  M  M  M  M  M
///                     (13 days: Apple keeps the renewal date), then .. Jul10
/// S12  monthly/weekly Jan25 .. Mar25 expires (voluntary); resubscribes weekly    M  M  .  .  .  .
///                     Apr08-15, grace Apr15-21, never recovered
/// S13  monthly        Jan08 .. Apr08; Feb08 payment refunded late (May20)        M  M  M  .  .  .
/// S14  monthly->pro   Feb12-Mar12, Mar12-(upgraded Mar20); pro Mar20 .. Jul20    .  M  P  P  P  P
/// S15  monthly        Mar03 .. Jul03                                             .  .  M  M  M  M
/// S16  monthly        Apr14 .. Jun14, expires                                    .  .  .  M  M  .
/// S17  yearly         Apr22 .. 2026-Apr22                                        .  .  .  Y  Y  Y
/// S18  monthly        trial May06-13, paid May13 .. Jul13                        .  .  .  .  M  M
/// S19  monthly        trial Jun02-09, auto-renew off Jun04 (abandoned)           .  .  .  .  .  .
/// S20  weekly         trial Jun16-19, paid Jun19 .. Jul03                        .  .  .  .  .  W
/// S21  yearly         Jan28, refunded Feb03                                      Y  .  .  .  .  .
/// S22  monthly        Jan03 .. May03, billing retry without grace, expires       M  M  M  M  .  .
/// S23  monthly        Jun05 .. Jul05                                             .  .  .  .  .  M
/// S24  monthly        free trial running now, auto-renew on  (pending)
/// S25  monthly        free trial running now, auto-renew off (abandoned)
///
/// month  paid active  monthly      yearly          weekly      pro      MRR = sum
/// Jan     8           6 x 9.99     2 x 4.999167    -           -        59.94 + 9.998333             = 69.94
/// Feb    10           8            2               -           -        79.92 + 9.998333             = 89.92
/// Mar    10           6            2               1 x 11.96   1x14.99  59.94 + 9.998333 + 11.96 + 14.99 = 96.89
/// Apr    11           7            3               -           1        69.93 + 14.9975 + 14.99      = 99.92
/// May    12           7            3               1           1        69.93 + 14.9975 + 11.96 + 14.99 = 111.88
/// Jun    13           7            3               2           1        69.93 + 14.9975 + 23.92 + 14.99 = 123.84
///   (per product: yearly 2 x 4.999167 = 10.00, 3 x = 15.00; trials at month ends: none)
///
/// churn  active at start  churned (not active at end)   rate    lapsed  resubscribed  gross rate
/// Feb     8               S21                            0.1250  1       0             0.1250
/// Mar    10               S02, S12                       0.2000  2       0             0.2000
/// Apr    10               S05, S13                       0.2000  2       0             0.2000
/// May    11               S22 (S10 lapsed May06, back May20) 0.0909  2   1             0.1818 (2/11)
/// Jun    12               S16                            0.0833  1       0             0.0833
///
/// new    started  trials  paid direct  trial conversions  new paid
/// Jan     8        0       8            0                  8      S01 S02 S03 S11 S12 S13 S21 S22
/// Feb     3        1       2            1 (S07)            3      S04 S07 S14
/// Mar     3        1       2            0                  2      S05 S08 S15
/// Apr     4        1       3            0 (S09 refunded)   3      S09 S10 S16 S17
/// May     2        1       1            1 (S18)            2      S06 S18
/// Jun     3        2       1            1 (S20)            2      S19 S20 S23
///
/// paid transactions by purchase month (refunded later)           refunds made in the month
/// Jan     8 (S21)  rate 0.1250                                    -
/// Feb     9 (S13)  rate 0.1111                                    1: S21 59.99
/// Mar    13        (S05 x5, S14 x2 incl. the upgrade)  0.0000     -
/// Apr    11 (S09)  rate 0.0909                                    1: S09 9.99
/// May     9        0.0000                                         1: S13 9.99
/// Jun    15        (S06 x5, S20 x2)  0.0000                       -
///
/// trials by cohort  Feb S07 converted; Mar S08 abandoned; Apr S09 not converted (first payment refunded);
///                   May S18 converted; Jun S19 abandoned (monthly), S20 converted (weekly)  -> 3 of 6 converted
/// ```
///
/// On the views of 0008 these figures fail: S11's recovered period was P1W (MRR 43.29 at Apr 1), S12's old period
/// was stretched to Apr 21 by the weekly period's grace (active at Apr 1, March churn 1 instead of 2), weekly was
/// x 52/12, refunded periods counted 0 even before the refund (Jan 69.94 -> 64.94, Feb 89.92 -> 79.94), and S09
/// counted as converted.
@Suite("Analytics on a hand-computed business")
struct SyntheticBusinessTests {
    static let pki = try! TestPKI()

    /// Runs the business through the handler into a fresh ledger.
    func withBusiness(
        _ business: SyntheticBusiness? = nil, _ body: @Sendable (TestDatabase) async throws -> Void
    ) async throws {
        let inputs = try (business ?? SyntheticBusiness.build(pki: Self.pki)).inputs.enumerated()
            .sorted { ($0.element.signedAt, $0.offset) < ($1.element.signedAt, $1.offset) }
            .map(\.element)
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            for input in inputs {
                try await pipeline.append(source: input.source, body: input.body)
            }
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == inputs.count)
            try await body(db)
        }
    }

    /// One text column of every row, as storeledger_analyst.
    func rows(_ db: TestDatabase, _ sql: String) async throws -> [String] {
        try await db.client.inTransaction(logger: db.logger) { connection in
            try await connection.query("SET LOCAL ROLE storeledger_analyst", logger: db.logger)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: db.logger)
            var values: [String] = []
            for try await value in rows.decode(String.self) { values.append(value) }
            return values
        }
    }

    @Test func theBusinessIsProjected() async throws {
        try await withBusiness { db in
            let subscriptions = try await db.scalar("SELECT count(*) FROM subscriptions WHERE environment = 'Production'")
            let periods = try await db.scalar("SELECT count(DISTINCT original_transaction_id) FROM analytics.subscription_periods")
            #expect(subscriptions == 25)
            #expect(periods == 25)
        }
    }

    @Test func activeSubscriptionsAndMRRAtEachMonthEnd() async throws {
        try await withBusiness { db in
            let months = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || paid_subscriptions || ' ' || trials || ' ' || mrr
                FROM analytics.mrr_by_month
                WHERE environment = 'Production' AND currency = 'USD' AND month < '2025-07-01' ORDER BY month
                """
            )
            #expect(
                months == [
                    "2025-01 8 0 69.94",
                    "2025-02 10 0 89.92",
                    "2025-03 10 0 96.89",
                    "2025-04 11 0 99.92",
                    "2025-05 12 0 111.88",
                    "2025-06 13 0 123.84",
                ])
            // Inside S11's recovered 13-day period and S12's gap, mid-month.
            let april3 = try await rows(db, "SELECT paid_subscriptions || ' ' || mrr FROM analytics.mrr_at('2025-04-03 12:00Z')")
            // S01 S03 S04 S05 S07 S11 S13 S14 S22 (S15 renewed Apr 3 00:00: also active) = 10;
            // 6 monthly (S01 S07 S11 S13 S15 S22) 59.94 + 2 yearly 9.998333 + weekly 11.96 + pro 14.99 = 96.89
            #expect(april3 == ["10 96.89"])
        }
    }

    @Test func subscriptionPeriodsTakeTheProductsBillingPeriodAndTieGraceToItsFailure() async throws {
        try await withBusiness { db in
            let periods = try await rows(
                db,
                """
                SELECT transaction_id || ' ' || billing_period || ' ' || round(monthly_revenue, 2) || ' '
                       || coalesce(to_char(grace_period_expires_at AT TIME ZONE 'UTC', 'MM-DD'), '-') || ' '
                       || to_char(active_until AT TIME ZONE 'UTC', 'MM-DD')
                FROM analytics.subscription_periods
                WHERE transaction_id IN ('101102', '101103', '101202', '101203', '101302', '100502')
                ORDER BY transaction_id
                """
            )
            #expect(
                periods == [
                    "100502 P1W 11.96 - 03-17",  // S05's second week: 2.99 x 4
                    "101102 P1M 9.99 04-07 04-07",  // S11 Feb 10 - Mar 10, its grace period until Apr 7
                    "101103 P1M 9.99 - 04-10",  // S11's recovered 13-day period is still a monthly
                    "101202 P1M 9.99 - 03-25",  // S12 expired voluntarily on Mar 25: no grace period
                    "101203 P1W 11.96 04-21 04-21",  // S12's weekly resubscription carries the grace period
                    "101302 P1M 9.99 - 03-08",  // S13's refunded Feb period counted while it gave access
                ])
        }
    }

    @Test func theCatalogPeriodWinsWhenTheCatalogListsTheProduct() async throws {
        try await withBusiness { db in
            try await db.client.query(
                "INSERT INTO product_catalog (product_id, period) VALUES ('com.example.monthly', 'P3M')", logger: db.logger
            )
            let period = try await rows(
                db, "SELECT billing_period || ' ' || round(monthly_revenue, 2) FROM analytics.subscription_periods WHERE transaction_id = '101103'"
            )
            #expect(period == ["P3M 3.33"])
        }
    }

    @Test func mrrByProduct() async throws {
        try await withBusiness { db in
            let products = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || replace(product_id, 'com.example.', '') || ' ' || paid_subscriptions || ' ' || mrr
                FROM analytics.mrr_by_product
                WHERE environment = 'Production' AND currency = 'USD' AND month < '2025-07-01' ORDER BY month, product_id
                """
            )
            #expect(
                products == [
                    "2025-01 monthly 6 59.94", "2025-01 yearly 2 10.00",
                    "2025-02 monthly 8 79.92", "2025-02 yearly 2 10.00",
                    "2025-03 monthly 6 59.94", "2025-03 pro.monthly 1 14.99", "2025-03 weekly 1 11.96", "2025-03 yearly 2 10.00",
                    "2025-04 monthly 7 69.93", "2025-04 pro.monthly 1 14.99", "2025-04 yearly 3 15.00",
                    "2025-05 monthly 7 69.93", "2025-05 pro.monthly 1 14.99", "2025-05 weekly 1 11.96", "2025-05 yearly 3 15.00",
                    "2025-06 monthly 7 69.93", "2025-06 pro.monthly 1 14.99", "2025-06 weekly 2 23.92", "2025-06 yearly 3 15.00",
                ])
        }
    }

    @Test func monthlyChurnNetsOutResubscriptions() async throws {
        try await withBusiness { db in
            let churn = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || active_at_start || ' ' || churned || ' ' || churn_rate
                FROM analytics.monthly_churn
                WHERE environment = 'Production' AND month < '2025-07-01' ORDER BY month
                """
            )
            #expect(
                churn == [
                    "2025-02 8 1 0.1250",
                    "2025-03 10 2 0.2000",
                    "2025-04 10 2 0.2000",
                    "2025-05 11 1 0.0909",
                    "2025-06 12 1 0.0833",
                ])
            let gross = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || lapsed || ' ' || resubscribed || ' ' || gross_churn_rate
                FROM analytics.monthly_churn
                WHERE environment = 'Production' AND month < '2025-07-01' ORDER BY month
                """
            )
            #expect(
                gross == [
                    "2025-02 1 0 0.1250",
                    "2025-03 2 0 0.2000",
                    "2025-04 2 0 0.2000",
                    "2025-05 2 1 0.1818",
                    "2025-06 1 0 0.0833",
                ])
        }
    }

    @Test func newSubscriptionsPerMonth() async throws {
        try await withBusiness { db in
            let months = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || sum(new_subscriptions) || ' ' || sum(new_trials) || ' ' || sum(new_paid_direct)
                       || ' ' || sum(trial_conversions) || ' ' || sum(new_paid)
                FROM analytics.new_subscriptions_by_month
                WHERE environment = 'Production' AND month < '2025-07-01' GROUP BY month ORDER BY month
                """
            )
            #expect(
                months == [
                    "2025-01 8 0 8 0 8",
                    "2025-02 3 1 2 1 3",
                    "2025-03 3 1 2 0 2",
                    "2025-04 4 1 3 0 3",
                    "2025-05 2 1 1 1 2",
                    "2025-06 3 2 1 1 2",
                ])
            let june = try await rows(
                db,
                """
                SELECT replace(product_id, 'com.example.', '') || ' ' || new_subscriptions || ' ' || new_trials || ' ' || trial_conversions
                FROM analytics.new_subscriptions_by_month WHERE month = '2025-06-01' ORDER BY product_id
                """
            )
            #expect(june == ["monthly 2 1 0", "weekly 1 1 1"])
        }
    }

    @Test func refundsAndRefundRateByMonth() async throws {
        try await withBusiness { db in
            let refunds = try await rows(
                db,
                """
                SELECT original_transaction_id || ' ' || to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') || ' ' || round(refunded_amount, 2)
                FROM analytics.refunds ORDER BY revoked_at
                """
            )
            #expect(refunds == ["102100 2025-02-03 59.99", "100900 2025-04-12 9.99", "101300 2025-05-20 9.99"])
            let rates = try await rows(
                db,
                """
                SELECT to_char(month, 'YYYY-MM') || ' ' || transactions || ' ' || refunded || ' ' || refund_rate || ' '
                       || refunds_in_month || ' ' || round(refunded_amount_in_month, 2)
                FROM analytics.refund_rate_by_month
                WHERE environment = 'Production' AND currency = 'USD' AND month < '2025-07-01' ORDER BY month
                """
            )
            #expect(
                rates == [
                    "2025-01 8 1 0.1250 0 0.00",
                    "2025-02 9 1 0.1111 1 59.99",
                    "2025-03 13 0 0.0000 0 0.00",
                    "2025-04 11 1 0.0909 1 9.99",
                    "2025-05 9 0 0.0000 1 9.99",
                    "2025-06 15 0 0.0000 0 0.00",
                ])
        }
    }

    @Test func trialConversionFollowsRevenueCat() async throws {
        try await withBusiness { db in
            let cohorts = try await rows(
                db,
                """
                SELECT to_char(cohort_month, 'YYYY-MM') || ' ' || replace(product_id, 'com.example.', '') || ' ' || trials || ' '
                       || converted || ' ' || pending || ' ' || conversion_rate
                FROM analytics.trial_conversion
                WHERE environment = 'Production' AND cohort_month < '2025-07-01' ORDER BY cohort_month, product_id
                """
            )
            #expect(
                cohorts == [
                    "2025-02 monthly 1 1 0 1.0000",
                    "2025-03 monthly 1 0 0 0.0000",
                    "2025-04 monthly 1 0 0 0.0000",
                    "2025-05 monthly 1 1 0 1.0000",
                    "2025-06 monthly 1 0 0 0.0000",
                    "2025-06 weekly 1 1 0 1.0000",
                ])
            let abandoned = try await rows(
                db,
                """
                SELECT to_char(cohort_month, 'YYYY-MM') || ' ' || replace(product_id, 'com.example.', '') || ' ' || abandoned
                FROM analytics.trial_conversion
                WHERE environment = 'Production' AND cohort_month < '2025-07-01' AND abandoned > 0 ORDER BY cohort_month, product_id
                """
            )
            // S09 too (since 0037): its first payment was refunded, so it neither converted nor is pending.
            #expect(abandoned == ["2025-03 monthly 1", "2025-04 monthly 1", "2025-06 monthly 1"])
            // Every trial is converted, pending or abandoned.
            let unaccounted = try await rows(
                db,
                "SELECT to_char(cohort_month, 'YYYY-MM') FROM analytics.trial_conversion WHERE trials <> converted + pending + abandoned")
            #expect(unaccounted == [])
            let refunded = try await rows(
                db, "SELECT converted || ' ' || converted_transaction_id FROM analytics.trials WHERE original_transaction_id = '100900'"
            )
            #expect(refunded == ["false 100902"])  // S09: its first payment was refunded
            let flagged = try await rows(
                db, "SELECT original_transaction_id FROM analytics.trials WHERE first_payment_refunded"
            )
            #expect(flagged == ["100900"])
            let pending = try await rows(
                db,
                "SELECT original_transaction_id || ' ' || pending FROM analytics.trials WHERE original_transaction_id IN ('102400', '102500') ORDER BY 1"
            )
            #expect(pending == ["102400 true", "102500 false"])
            let running = try await rows(
                db,
                "SELECT original_transaction_id || ' ' || abandoned FROM analytics.trials WHERE original_transaction_id IN ('102400', '102500') ORDER BY 1"
            )
            #expect(running == ["102400 false", "102500 true"])
        }
    }

    /// A trial whose first payment failed and never recovered (billing retry, auto-renew still on) is abandoned once the
    /// trial ended: before 0037 it was neither converted, pending nor abandoned, and the cohort's trials did not add up.
    @Test func aTrialWhoseFirstPaymentFailedIsAbandoned() async throws {
        var business = SyntheticBusiness(pki: Self.pki)
        try business.subscribe(30, SyntheticBusiness.monthly, "2025-08-01", "2025-08-08", trial: "P1W")
        try business.failToRenew(30, SyntheticBusiness.monthly, at: "2025-08-08")
        try await withBusiness(business) { db in
            let trial = try await rows(
                db, "SELECT converted || ' ' || pending || ' ' || abandoned FROM analytics.trials WHERE original_transaction_id = '103000'")
            #expect(trial == ["false false true"])
            let cohort = try await rows(
                db, "SELECT trials || ' ' || converted || ' ' || pending || ' ' || abandoned FROM analytics.trial_conversion")
            #expect(cohort == ["1 0 0 1"])
        }
    }
}
