import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The analyst views of `0008_analytics.sql` and the read-only `storeledger_analyst` role, on a small hand-built
/// ledger (``AnalyticsFixture``). The expected numbers are worked out by hand in the fixture's comments and in
/// docs/analytics.md, which runs the same data.
///
/// `SET LOCAL ROLE storeledger_analyst` needs the test server's user to be a superuser or a member of the role
/// (`scripts/test`'s throwaway cluster connects as its superuser).
@Suite("Analytics views")
struct AnalyticsViewTests {
    /// Every view in the analytics schema, and a call of each function.
    static let readableRelations = [
        "analytics.billing_periods",
        "analytics.notifications",
        "analytics.transactions",
        "analytics.subscription_periods",
        "analytics.subscriptions",
        "analytics.purchases",
        "analytics.subscription_timeline",
        "analytics.months",
        "analytics.mrr_by_month",
        "analytics.monthly_churn",
        "analytics.refunds",
        "analytics.trials",
        "analytics.trial_conversion",
        "analytics.mrr_by_product",
        "analytics.new_subscriptions_by_month",
        "analytics.refund_rate_by_month",
        "analytics.active_subscriptions_at('2025-02-06 00:00Z')",
        "analytics.mrr_at('2025-02-06 00:00Z')",
        "analytics.entitlements_now",
        "analytics.entitlements_at('2025-02-06 00:00Z')",
    ]

    /// Loads the fixture into a fresh, migrated database.
    func seed(_ db: TestDatabase) async throws {
        for statement in AnalyticsFixture.statements {
            try await db.client.query(PostgresQuery(unsafeSQL: statement), logger: db.logger)
        }
    }

    /// Runs `sql` as storeledger_analyst (in a transaction, so the role ends with it) and returns its one integer.
    func countAsAnalyst(_ db: TestDatabase, _ sql: String) async throws -> Int {
        try await db.client.inTransaction(logger: db.logger) { connection in
            try await connection.query("SET LOCAL ROLE storeledger_analyst", logger: db.logger)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: db.logger)
            var result = -1
            for try await value in rows.decode(Int.self) { result = value }
            return result
        }
    }

    /// Records the payloads `payloads` selects (a query whose column `j` is a transaction payload) as standalone
    /// transactions, as the fixture records its own.
    func recordTransactions(_ db: TestDatabase, payloads: String) async throws {
        try await db.client.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO transactions (fact_sha256, payload, standalone, first_event_id)
                    SELECT sha256(convert_to(j::text, 'UTF8')), j, true, 1 FROM (\(payloads)) AS x
                    """), logger: db.logger
        ).readToEnd()
    }

    /// The text rows `sql` returns (one text column), as the migrating user.
    func texts(_ db: TestDatabase, _ sql: String) async throws -> [String] {
        let rows = try await db.client.query(PostgresQuery(unsafeSQL: sql), logger: db.logger)
        var values: [String] = []
        for try await value in rows.decode(String.self) { values.append(value) }
        return values
    }

    @Test func theMigrationCreatesTheAnalystRole() async throws {
        try await TestDatabase.withFresh { db in
            let roles = try await db.scalar("SELECT count(*) FROM pg_roles WHERE rolname = 'storeledger_analyst' AND NOT rolcanlogin")
            #expect(roles == 1)
        }
    }

    @Test(arguments: readableRelations)
    func theAnalystCanReadEveryView(_ relation: String) async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let count = try await countAsAnalyst(db, "SELECT count(*) FROM \(relation)")
            #expect(count > 0, "\(relation) returned no rows")
        }
    }

    @Test(arguments: [
        "SELECT count(*) FROM subscriptions",
        "SELECT count(*) FROM events",
        "INSERT INTO subscriptions (environment, original_transaction_id, status, entitled) VALUES ('Production', 'x', 'active', true)",
        "UPDATE subscriptions SET entitled = false",
        "DELETE FROM subscriptions",
        "TRUNCATE subscriptions",
        #"INSERT INTO events (source, body, body_sha256) VALUES ('client', '\x00', sha256('\x00'))"#,
        "TRUNCATE events",
        "INSERT INTO event_queue (event_id, event_received_at) VALUES (1, now())",
        "UPDATE transactions SET standalone = false",
        "DELETE FROM notifications",
        "CREATE TABLE public.analyst_scratch (x integer)",
        "CREATE TABLE analytics.analyst_scratch (x integer)",
        "CREATE VIEW analytics.analyst_view AS SELECT 1 AS x",
        "CREATE SCHEMA analyst_schema",
        "INSERT INTO analytics.subscriptions (environment, original_transaction_id, status, entitled) VALUES ('Production', 'y', 'active', true)",
        "UPDATE analytics.subscriptions SET entitled = false",
        "DELETE FROM analytics.purchases",
        "SELECT nextval('events_id_seq')",
        "SELECT analytics.grant_read_access('storeledger_analyst')",
        "SELECT count(*) FROM public.entitlements_now",
        "SELECT count(*) FROM public.entitlements_at(now())",
        "INSERT INTO product_catalog (product_id) VALUES ('x')",
        "DELETE FROM analytics.product_catalog",
    ])
    func theAnalystCanWriteNothing(_ statement: String) async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let error = await #expect(throws: PSQLError.self) {
                try await db.client.inTransaction(logger: db.logger) { connection in
                    try await connection.query("SET LOCAL ROLE storeledger_analyst", logger: db.logger)
                    // Errors can surface while rows are read: read them all.
                    for try await _ in try await connection.query(PostgresQuery(unsafeSQL: statement), logger: db.logger) {}
                }
            }
            #expect(error?.serverInfo?[.sqlState] == "42501", "\(statement): \(String(reflecting: error))")
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM purchases") == 1)
        }
    }

    @Test func noPrivilegeOrDefaultPrivilegeLetsTheAnalystWrite() async throws {
        try await TestDatabase.withFresh { db in
            let writable = try await db.scalar(
                """
                SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname IN ('public', 'analytics') AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                  AND (has_table_privilege('storeledger_analyst', c.oid, 'INSERT')
                       OR has_table_privilege('storeledger_analyst', c.oid, 'UPDATE')
                       OR has_table_privilege('storeledger_analyst', c.oid, 'DELETE')
                       OR has_table_privilege('storeledger_analyst', c.oid, 'TRUNCATE')
                       OR has_table_privilege('storeledger_analyst', c.oid, 'REFERENCES')
                       OR has_table_privilege('storeledger_analyst', c.oid, 'TRIGGER'))
                """
            )
            #expect(writable == 0)
            let defaults = try await db.scalar(
                """
                SELECT count(*) FROM pg_default_acl d, aclexplode(d.defaclacl) a
                WHERE a.grantee = 'storeledger_analyst'::regrole AND a.privilege_type <> 'SELECT'
                """
            )
            #expect(defaults == 0)
            #expect(try await db.scalar("SELECT count(*) WHERE has_schema_privilege('storeledger_analyst', 'public', 'CREATE')") == 0)
            #expect(try await db.scalar("SELECT count(*) WHERE has_schema_privilege('storeledger_analyst', 'analytics', 'CREATE')") == 0)
            #expect(try await db.scalar("SELECT count(*) WHERE has_database_privilege('storeledger_analyst', current_database(), 'CREATE')") == 0)
            // A view a later migration adds to analytics is readable (and only readable) by default.
            try await db.client.query("CREATE VIEW analytics.later_view AS SELECT 1 AS x", logger: db.logger)
            #expect(try await db.scalar("SELECT count(*) WHERE has_table_privilege('storeledger_analyst', 'analytics.later_view', 'SELECT')") == 1)
            #expect(try await db.scalar("SELECT count(*) WHERE has_table_privilege('storeledger_analyst', 'analytics.later_view', 'INSERT')") == 0)
        }
    }

    @Test func theMigrationSucceedsWhenTheRoleAlreadyExists() async throws {
        // Roles are cluster-wide: the first test database created it; run the role block again in this one.
        try await TestDatabase.withFresh { db in
            try await db.client.query("SELECT analytics.grant_read_access('storeledger_analyst')", logger: db.logger)
            #expect(try await db.scalar("SELECT count(*) FROM pg_roles WHERE rolname = 'storeledger_analyst'") == 1)
            #expect(try await db.scalar("SELECT count(*) WHERE has_table_privilege('storeledger_analyst', 'analytics.mrr_by_month', 'SELECT')") == 1)
        }
    }

    @Test func oneRowPerVerifiedNotificationWithTypedColumns() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            #expect(try await db.scalar("SELECT count(*) FROM analytics.notifications") == 8)
            #expect(try await db.scalar("SELECT count(DISTINCT notification_uuid) FROM analytics.notifications") == 8)
            // A renewal delivered twice is one row with delivery_count 2, its nested transaction typed.
            let renewal = try await db.scalar(
                """
                SELECT count(*) FROM analytics.notifications
                WHERE notification_uuid = '00000000-0000-4000-8000-000000000002'
                  AND notification_type = 'DID_RENEW' AND subtype IS NULL AND status_name = 'active'
                  AND environment = 'Production' AND app_apple_id = 1234 AND original_transaction_id = '1000'
                  AND transaction_id = '1002' AND product_type = 'Auto-Renewable Subscription'
                  AND purchased_at = '2025-02-10 00:00Z' AND expires_at = '2025-03-10 00:00Z'
                  AND signed_at = '2025-02-10 00:00:01Z'
                  AND price = 9990 AND price_amount = 9.99 AND currency = 'USD' AND delivery_count = 2
                """
            )
            #expect(renewal == 1)
            let grace = try await db.scalar(
                """
                SELECT count(*) FROM analytics.notifications
                WHERE notification_type = 'DID_FAIL_TO_RENEW' AND subtype = 'GRACE_PERIOD' AND status_name = 'grace_period'
                  AND auto_renew AND is_in_billing_retry AND grace_period_expires_at = '2025-04-26 00:00Z'
                """
            )
            #expect(grace == 1)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM analytics.notifications WHERE notification_type = 'TEST' AND original_transaction_id IS NULL") == 1)
        }
    }

    @Test func billingPeriodsAreRoundedToTheNearestStandardDuration() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let periods = try await texts(
                db,
                """
                SELECT DISTINCT original_transaction_id || ':' || billing_period FROM analytics.subscription_periods
                WHERE original_transaction_id IN ('1000', '2000', '3000', '7000', '8000') AND NOT is_trial
                ORDER BY 1
                """
            )
            #expect(periods == ["1000:P1M", "2000:P1Y", "3000:P1M", "7000:P1W", "8000:P1M"])
            let samples = try await texts(
                db,
                """
                SELECT analytics.billing_period(s, s + d, 'Production') FROM (VALUES
                    (interval '7 days'), (interval '28 days'), (interval '31 days'), (interval '61 days'),
                    (interval '92 days'), (interval '181 days'), (interval '366 days')) AS v(d),
                    (SELECT timestamptz '2025-02-01 00:00Z' AS s) AS start
                ORDER BY d
                """
            )
            #expect(samples == ["P1W", "P1M", "P1M", "P2M", "P3M", "P6M", "P1Y"])
        }
    }

    @Test func mrrNormalisesPricesPerMonthAndCountsTrialsAndFamilyAsZero() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            // 2025-01-31 12:00: S1 monthly 9.99 + S2 yearly 99.99 / 12 = 9.99 + 8.3325 = 18.32; S5 is family-shared (0);
            // S6 was refunded on 2025-01-25 (gone).
            let january = try await texts(
                db,
                "SELECT environment || ' ' || currency || ' ' || active_subscriptions || ' ' || paid_subscriptions || ' ' || trials || ' ' || mrr FROM analytics.mrr_at('2025-01-31 12:00Z')"
            )
            #expect(january == ["Production USD 3 2 0 18.32"])
            // 2025-02-06: the same two paying subscriptions plus two free trials, which add nothing.
            let withTrials = try await texts(
                db,
                "SELECT environment || ' ' || currency || ' ' || active_subscriptions || ' ' || paid_subscriptions || ' ' || trials || ' ' || mrr FROM analytics.mrr_at('2025-02-06 00:00Z')"
            )
            #expect(withTrials == ["Production USD 5 2 2 18.32"])
            #expect(
                try await db.scalar("SELECT count(*) FROM analytics.subscription_periods WHERE transaction_id = '2001' AND monthly_revenue = 8.3325")
                    == 1)
            #expect(try await db.scalar("SELECT count(*) FROM analytics.subscription_periods WHERE is_trial AND monthly_revenue <> 0") == 0)
            // A refunded period counts while it gave access (RevenueCat does not rewrite past MRR): S6's 9.99 until
            // its revocation on 2025-01-25, which ends its access (gone from mrr_at on 2025-01-31 above).
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM analytics.subscription_periods WHERE transaction_id = '6001' AND monthly_revenue = 9.99 AND active_until = '2025-01-25 00:00Z'"
                ) == 1)
            // Currencies are never added: weekly 2.99 EUR x 4 (RevenueCat) = 11.96 EUR beside 18.32 USD.
            let march = try await texts(
                db,
                "SELECT currency || ' ' || mrr FROM analytics.mrr_by_month WHERE month = '2025-03-01' AND environment = 'Production' ORDER BY currency"
            )
            #expect(march == ["EUR 11.96", "USD 18.32"])
        }
    }

    @Test func monthlyChurnCountsPaidSubscriptionsActiveAtTheStartAndGoneAtTheEnd() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let churn = try await texts(
                db,
                """
                SELECT to_char(month, 'YYYY-MM-DD') || ' ' || active_at_start || ' ' || churned || ' ' || churn_rate FROM analytics.monthly_churn
                WHERE environment = 'Production' AND month IN ('2025-02-01', '2025-03-01', '2025-04-01', '2025-05-01', '2026-01-01')
                ORDER BY month
                """
            )
            #expect(
                churn == [
                    "2025-02-01 2 0 0.0000",  // S1, S2 (S5 is family-shared, S6 refunded)
                    "2025-03-01 3 1 0.3333",  // S1, S2, S3; S3 ends 2025-03-08
                    "2025-04-01 3 2 0.6667",  // S1 (grace until 04-26), S2, S7; S1 and S7 end
                    "2025-05-01 1 0 0.0000",  // S2
                    "2026-01-01 1 1 1.0000",  // S2 ends 2026-01-15
                ])
            #expect(try await db.scalar("SELECT count(*) FROM analytics.monthly_churn WHERE month = '2025-01-01'") == 0)
        }
    }

    /// docs/analytics.md, example 13: what each purchase of the fixture grants on 2025-06-01, as the analyst reads it.
    @Test func entitlementsAtAnInstantAsDocumented() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let lines = try await db.client.inTransaction(logger: db.logger) { connection in
                try await connection.query("SET LOCAL ROLE storeledger_analyst", logger: db.logger)
                let rows = try await connection.query(
                    """
                    SELECT concat_ws(' | ', original_transaction_id, kind, coalesce(entitlement, ''), entitled_now, reason, status_now,
                                     to_char(ends_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'))
                    FROM analytics.entitlements_at('2025-06-01 00:00Z') ORDER BY original_transaction_id
                    """,
                    logger: db.logger
                )
                var lines: [String] = []
                for try await line in rows.decode(String.self) { lines.append(line) }
                return lines
            }
            #expect(
                lines == [
                    "2000 | subscription | premium | t | active | active | 2026-01-15",
                    "6000 | subscription | premium | f | revoked | revoked | 2025-02-05",
                    "9001 | purchase |  | f | revoked | revoked | 2025-03-07",
                ])
        }
    }

    @Test func trialConversionAndRefunds() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let cohorts = try await texts(
                db,
                "SELECT to_char(cohort_month, 'YYYY-MM-DD') || ' ' || trials || ' ' || converted || ' ' || pending || ' ' || conversion_rate FROM analytics.trial_conversion"
            )
            #expect(cohorts == ["2025-02-01 2 1 0 0.5000"])
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM analytics.trials WHERE original_transaction_id = '3000' AND converted AND converted_transaction_id = '3002'"
                ) == 1)
            let refunds = try await texts(
                db,
                "SELECT transaction_id || ' ' || coalesce(revocation_type, '-') || ' ' || refunded_amount || ' ' || currency FROM analytics.refunds ORDER BY transaction_id"
            )
            #expect(refunds == ["6001 REFUND_FULL 9.990 USD", "9001 REFUND_PRORATED 2.495 USD"])
        }
    }

    /// A Family Sharing member's copy of S3 (its own original transaction, the purchaser's trial then paid month) is
    /// no trial and no conversion of its own: the trial cohort, the month's new trials and conversions, and the
    /// console's trials chart are those without it. It is still a subscription that started in the month.
    @Test func aFamilyMembersCopyOfATrialIsNoTrialOrConversion() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            try await recordTransactions(
                db,
                payloads: """
                    SELECT payload || jsonb_build_object('originalTransactionId', '3500', 'transactionId', '35' || right(transaction_id, 2),
                                                         'inAppOwnershipType', 'FAMILY_SHARED') AS j
                    FROM transactions WHERE original_transaction_id = '3000'
                    """)
            #expect(try await db.scalar("SELECT count(*) FROM analytics.subscription_periods WHERE original_transaction_id = '3500'") == 2)
            let cohorts = try await texts(
                db,
                "SELECT to_char(cohort_month, 'YYYY-MM-DD') || ' ' || trials || ' ' || converted || ' ' || pending || ' ' || conversion_rate FROM analytics.trial_conversion"
            )
            #expect(cohorts == ["2025-02-01 2 1 0 0.5000"])
            let february = try await texts(
                db,
                """
                SELECT sum(new_subscriptions) || ' ' || sum(new_trials) || ' ' || sum(new_paid_direct) || ' ' || sum(trial_conversions) || ' ' || sum(new_paid)
                FROM analytics.new_subscriptions_by_month WHERE month = '2025-02-01' AND environment = 'Production'
                """)
            #expect(february == ["3 2 0 1 1"], "S3, S4 and the member's copy started; the trials of S3 and S4; S3 converted")
            // On 2025-02-06 S3 and S4 are in their trials, and so is the member's copy, which gives access but is no trial.
            let instant = try await texts(
                db, "SELECT active_subscriptions || ' ' || trials FROM analytics.mrr_at('2025-02-06 00:00Z') WHERE environment = 'Production'")
            #expect(instant == ["6 2"])
            let charts = ChartStore(client: db.client)
            _ = try await charts.refresh(logger: db.logger)
            let month = try #require(Calendar.utc.date(from: DateComponents(year: 2025, month: 2, day: 1)))
            let chart = try await charts.trials(ChartFilter(fromMonth: month, toMonth: month, environment: "Production"), logger: db.logger)
            #expect(chart.map(\.trials) == [2])
            #expect(chart.map(\.converted) == [1])
            // A trial over the end of February, and a member's copy of it: mrr_by_product counts the purchaser's alone.
            try await recordTransactions(
                db,
                payloads: """
                    SELECT payload || jsonb_build_object('originalTransactionId', v.id, 'transactionId', v.id, 'inAppOwnershipType', v.owner,
                                                         'purchaseDate', 1740441600000, 'expiresDate', 1741046400000) AS j
                    FROM transactions, (VALUES ('3600', 'PURCHASED'), ('3601', 'FAMILY_SHARED')) AS v(id, owner)
                    WHERE transaction_id = '3001'
                    """)
            #expect(
                try await db.scalar(
                    "SELECT coalesce(sum(trials), 0)::int8 FROM analytics.mrr_by_product WHERE month = '2025-02-01' AND environment = 'Production'")
                    == 1)
        }
    }

    /// A family member's copy revoked without a revocationType (every payload before Apple added the field) is no
    /// refund: the purchaser's own transaction carries the refund. It is listed, refunding nothing, and no month counts it.
    @Test func aFamilySharedRevocationWithoutARevocationTypeRefundsNothing() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            // S5's second period (family-shared) revoked on 2025-03-01, with no revocationType.
            try await recordTransactions(
                db,
                payloads: """
                    SELECT payload || jsonb_build_object('revocationDate', 1740787200000, 'revocationReason', 0, 'signedDate', 1740787200000) AS j
                    FROM transactions WHERE transaction_id = '5002' LIMIT 1
                    """)
            let refunds = try await texts(
                db,
                "SELECT transaction_id || ' ' || coalesce(revocation_type, '-') || ' ' || refunded_amount FROM analytics.refunds ORDER BY transaction_id"
            )
            #expect(refunds == ["5002 - 0", "6001 REFUND_FULL 9.990", "9001 REFUND_PRORATED 2.495"])
            let march = try await texts(
                db,
                """
                SELECT refunds_in_month || ' ' || refunded_amount_in_month FROM analytics.refund_rate_by_month
                WHERE month = '2025-03-01' AND environment = 'Production' AND currency = 'USD'
                """)
            #expect(march == ["1 2.495"])
            // The console's refunds chart (its snapshot's own query) agrees: March has the coins' refund only.
            let charts = ChartStore(client: db.client)
            _ = try await charts.refresh(logger: db.logger)
            let utc = Calendar.utc
            let month = try #require(utc.date(from: DateComponents(year: 2025, month: 3, day: 1)))
            let chart = try await charts.refunds(ChartFilter(fromMonth: month, toMonth: month, environment: "Production"), logger: db.logger)
            #expect(chart.map(\.refunds) == [1])
            #expect(chart.map(\.amount) == [2.495])
        }
    }

    /// A non-consumable restored on another device is a transaction of its own with the purchase's original id
    /// (migration 0036). It is the same sale: the refund rate counts the purchase once, in the month it was bought, and
    /// a refund that names the purchase and its copy is one refund; a copy's Family Sharing revocation is none.
    @Test func aRestoredCopyIsTheSameSaleAndItsRefundTheSameRefund() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let rates =
                "SELECT to_char(month, 'YYYY-MM') || ' ' || transactions || ' ' || refunded || ' ' || refunds_in_month || ' ' || refunded_amount_in_month FROM analytics.refund_rate_by_month WHERE environment = 'Production' AND currency = 'USD' ORDER BY month"
            func copy(_ id: String, of original: String, purchased: String, revoked: String? = nil, type: String? = nil) -> String {
                let revocation =
                    revoked.map {
                        "'revocationDate', (extract(epoch FROM timestamptz '\($0)') * 1000)::bigint, 'revocationReason', 0, 'revocationType', '\(type ?? "REFUND_FULL")', 'signedDate', (extract(epoch FROM timestamptz '\($0)') * 1000)::bigint"
                    } ?? "'signedDate', (extract(epoch FROM timestamptz '\(purchased)') * 1000)::bigint"
                return """
                    SELECT (payload - 'revocationDate' - 'revocationReason' - 'revocationType' - 'revocationPercentage') || jsonb_build_object(
                        'transactionId', '\(id)', 'originalTransactionId', '\(original)', 'productId', 'com.example.fullunlock',
                        'type', 'Non-Consumable', 'price', 19990,
                        'purchaseDate', (extract(epoch FROM timestamptz '\(purchased)') * 1000)::bigint, \(revocation)) AS j
                    FROM transactions WHERE transaction_id = '9001' LIMIT 1
                    """
            }
            // Two purchases in March, each restored on another device in April.
            for original in ["9100", "9110"] {
                try await recordTransactions(db, payloads: copy(original, of: original, purchased: "2025-03-10 00:00Z"))
            }
            let bought = try await texts(db, rates)
            for (id, original) in [("9101", "9100"), ("9111", "9110")] {
                try await recordTransactions(db, payloads: copy(id, of: original, purchased: "2025-04-02 00:00Z"))
            }
            #expect(try await texts(db, rates) == bought, "a restored copy counted as another sale")
            #expect(bought.contains { $0.hasPrefix("2025-03 ") })

            // 9100's copy revoked as a Family Sharing revocation, before the purchase itself is refunded in May: the
            // purchaser's refund is the sale's refund. 9110 and its copy both refunded in May: one refund.
            try await recordTransactions(
                db, payloads: copy("9101", of: "9100", purchased: "2025-04-02 00:00Z", revoked: "2025-04-20 00:00Z", type: "FAMILY_REVOKE"))
            try await recordTransactions(db, payloads: copy("9100", of: "9100", purchased: "2025-03-10 00:00Z", revoked: "2025-05-01 00:00Z"))
            try await recordTransactions(db, payloads: copy("9110", of: "9110", purchased: "2025-03-10 00:00Z", revoked: "2025-05-01 00:00Z"))
            try await recordTransactions(db, payloads: copy("9111", of: "9110", purchased: "2025-04-02 00:00Z", revoked: "2025-05-01 00:00Z"))
            let refunds = try await texts(
                db,
                """
                SELECT transaction_id || ' ' || revocation_type || ' ' || refunded_amount FROM analytics.refunds
                WHERE original_transaction_id IN ('9100', '9110') ORDER BY transaction_id
                """
            )
            #expect(refunds == ["9100 REFUND_FULL 19.990", "9110 REFUND_FULL 19.990"])
            let after = try await texts(db, rates)
            #expect(after.filter { $0.hasPrefix("2025-04 ") } == bought.filter { $0.hasPrefix("2025-04 ") }, "a Family Sharing revocation refunded")
            #expect(after.filter { $0.hasPrefix("2025-05 ") } == ["2025-05 0 0 2 39.980"])
            let march = try #require(bought.first { $0.hasPrefix("2025-03 ") }).split(separator: " ").map(String.init)
            #expect(
                after.first { $0.hasPrefix("2025-03 ") }
                    == [march[0], march[1], String(Int(march[2])! + 2), march[3], march[4]].joined(separator: " "))
        }
    }

    /// A subscription period of S1's shape (monthly 9.99 USD), as `id` of `original`, with `changes` (a jsonb object
    /// merged in) and `removed` keys taken out.
    static func period(
        _ id: String, of original: String, from start: String, to end: String, product: String = "com.example.unlisted.monthly",
        signed: String? = nil, changes: String = "'{}'::jsonb", removed: [String] = []
    ) -> String {
        func ms(_ instant: String) -> String { "(extract(epoch FROM timestamptz '\(instant)') * 1000)::bigint" }
        return """
            SELECT (payload \(removed.map { "- '\($0)'" }.joined(separator: " "))) || jsonb_build_object(
                'transactionId', '\(id)', 'originalTransactionId', '\(original)', 'productId', '\(product)',
                'purchaseDate', \(ms(start)), 'expiresDate', \(ms(end)), 'signedDate', \(ms(signed ?? start))) || \(changes) AS j
            FROM transactions WHERE transaction_id = '1001' LIMIT 1
            """
    }

    /// Payloads before App Store Server Notifications 2.9 (and Xcode's test transactions) carry no `price`: such a
    /// period is paid (among paid subscriptions and in churn), but an introductory offer of no known kind, taken for
    /// a free trial.
    @Test func aPeriodWithoutAPriceIsPaidUnlessItsOfferIsATrial() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            try await recordTransactions(
                db, payloads: Self.period("9201", of: "9200", from: "2025-01-15 00:00Z", to: "2025-02-15 00:00Z", removed: ["price"]))
            try await recordTransactions(
                db,
                payloads: Self.period(
                    "9301", of: "9300", from: "2025-01-15 00:00Z", to: "2025-01-22 00:00Z", changes: "'{\"offerType\": 1}'::jsonb", removed: ["price"]
                ))
            let periods = try await texts(
                db,
                "SELECT transaction_id || ' ' || is_trial || ' ' || is_paid FROM analytics.subscription_periods WHERE original_transaction_id IN ('9200', '9300') ORDER BY 1"
            )
            #expect(periods == ["9201 false true", "9301 true false"])
            let atStart = try await texts(
                db, "SELECT active_at_start::text FROM analytics.monthly_churn WHERE month = '2025-02-01' AND environment = 'Production'")
            try await db.client.query("DELETE FROM transactions WHERE payload ->> 'originalTransactionId' IN ('9200', '9300')", logger: db.logger)
                .readToEnd()
            let without = try await texts(
                db, "SELECT active_at_start::text FROM analytics.monthly_churn WHERE month = '2025-02-01' AND environment = 'Production'")
            // 9200 was paid and active on 1 February: churn's starting set counted it.
            #expect(atStart.count == 1 && without.count == 1)
            #expect(atStart.compactMap { Int($0) }.first == without.compactMap { Int($0) }.first.map { $0 + 1 })
        }
    }

    /// A month after the snapshot's has no churn yet: the console's churn chart has no subscribers at its start (its
    /// rate is left empty), not a yearly subscriber's 0 % made up, as analytics.monthly_churn has no row for it.
    @Test func theChurnChartHasNothingForAMonthAfterTheSnapshots() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let now = Date()
            func instant(_ offset: TimeInterval) -> String { ISO8601DateFormatter().string(from: now.addingTimeInterval(offset)) }
            try await recordTransactions(
                db,
                payloads: Self.period("9701", of: "9700", from: instant(-40 * 86_400), to: instant(325 * 86_400), product: "com.example.yearly.now"))
            let charts = ChartStore(client: db.client)
            _ = try await charts.refresh(logger: db.logger)
            var month = Calendar.utc.dateComponents([.year, .month], from: now)
            month.day = 1
            let thisMonth = try #require(Calendar.utc.date(from: month))
            let later = try #require(Calendar.utc.date(byAdding: .month, value: 1, to: thisMonth))
            let last = try #require(Calendar.utc.date(byAdding: .month, value: 3, to: thisMonth))
            let current = try await charts.churn(
                ChartFilter(fromMonth: thisMonth, toMonth: thisMonth, product: "com.example.yearly.now"), logger: db.logger)
            #expect(current.map(\.activeAtStart) == [1], "the subscription is counted in the snapshot's month")
            let future = try await charts.churn(ChartFilter(fromMonth: later, toMonth: last, product: "com.example.yearly.now"), logger: db.logger)
            #expect(future.map(\.activeAtStart) == [0, 0, 0], "\(future)")
        }
    }

    /// A trial followed by a period without a price (payloads before App Store Server Notifications 2.9) converted:
    /// that period is paid, as MRR and churn count it, in the view and in the console's trials chart alike.
    @Test func aTrialFollowedByAnUnpricedPeriodConverted() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let product = "com.example.unpriced.monthly"
            try await recordTransactions(
                db,
                payloads: Self.period(
                    "9601", of: "9600", from: "2025-03-10 00:00Z", to: "2025-03-17 00:00Z", product: product,
                    changes: "'{\"offerType\": 1, \"offerDiscountType\": \"FREE_TRIAL\"}'::jsonb", removed: ["price"]))
            try await recordTransactions(
                db,
                payloads: Self.period("9602", of: "9600", from: "2025-03-17 00:00Z", to: "2025-04-17 00:00Z", product: product, removed: ["price"]))
            let trial = try await texts(
                db,
                "SELECT converted || ' ' || abandoned || ' ' || coalesce(converted_transaction_id, '-') FROM analytics.trials WHERE original_transaction_id = '9600'"
            )
            #expect(trial == ["true false 9602"])
            let charts = ChartStore(client: db.client)
            _ = try await charts.refresh(logger: db.logger)
            let month = try #require(Calendar.utc.date(from: DateComponents(year: 2025, month: 3, day: 1)))
            let chart = try await charts.trials(ChartFilter(fromMonth: month, toMonth: month, product: product), logger: db.logger)
            #expect(chart.map(\.trials) == [1])
            #expect(chart.map(\.converted) == [1])
            #expect(chart.map(\.abandoned) == [0])
        }
    }

    /// A renewal-date extension (RENEWAL_EXTENDED, up to 90 days) re-signs the period with a later expiry. Without a
    /// catalog period, the subscription's billing period is still its months, not the extended period's length, so
    /// its MRR is the monthly price; the extended period gives access until its new end.
    @Test func aRenewalDateExtensionIsNoLongerBillingPeriod() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            try await recordTransactions(db, payloads: Self.period("9401", of: "9400", from: "2025-01-01 00:00Z", to: "2025-02-01 00:00Z"))
            try await recordTransactions(db, payloads: Self.period("9402", of: "9400", from: "2025-02-01 00:00Z", to: "2025-03-01 00:00Z"))
            try await recordTransactions(
                db, payloads: Self.period("9402", of: "9400", from: "2025-02-01 00:00Z", to: "2025-05-30 00:00Z", signed: "2025-02-10 00:00Z"))
            let periods = try await texts(
                db,
                """
                SELECT transaction_id || ' ' || billing_period || ' ' || monthly_revenue || ' ' || to_char(active_until AT TIME ZONE 'UTC', 'YYYY-MM-DD')
                FROM analytics.subscription_periods WHERE original_transaction_id = '9400' ORDER BY 1
                """)
            #expect(periods == ["9401 P1M 9.9900000000000000 2025-02-01", "9402 P1M 9.9900000000000000 2025-05-30"])
        }
    }

    /// Apple's upgrade notification carries only the new transaction; the old period is re-signed with isUpgraded
    /// only where an app or Get Transaction History fetches it. Unrevised, it stops giving access when the new period
    /// begins, so the subscription counts once, under its new product.
    @Test func anUpgradedPeriodEndsWhenTheNextBeginsThoughNeverReSigned() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            try await recordTransactions(db, payloads: Self.period("9501", of: "9500", from: "2025-01-01 00:00Z", to: "2025-02-01 00:00Z"))
            try await recordTransactions(
                db, payloads: Self.period("9502", of: "9500", from: "2025-01-10 00:00Z", to: "2025-02-10 00:00Z", product: "com.example.unlisted.pro")
            )
            let periods = try await texts(
                db,
                """
                SELECT transaction_id || ' ' || to_char(active_until AT TIME ZONE 'UTC', 'YYYY-MM-DD')
                FROM analytics.subscription_periods WHERE original_transaction_id = '9500' ORDER BY 1
                """)
            #expect(periods == ["9501 2025-01-10", "9502 2025-02-10"])
            let products = try await texts(
                db,
                """
                SELECT product_id FROM analytics.subscription_periods
                WHERE original_transaction_id = '9500' AND period_start <= '2025-01-31 00:00Z' AND active_until > '2025-01-31 00:00Z'
                """)
            #expect(products == ["com.example.unlisted.pro"])
        }
    }

    @Test func theTimelineOrdersPeriodsRevocationsAndNotifications() async throws {
        try await TestDatabase.withFresh { db in
            try await seed(db)
            let timeline = try await texts(
                db,
                "SELECT seq || ' ' || kind || ' ' || event FROM analytics.subscription_timeline WHERE original_transaction_id = '6000' ORDER BY seq"
            )
            #expect(timeline == ["1 period PURCHASE", "2 revocation REFUND_FULL", "3 notification REFUND"])
        }
    }

    /// Apple's two EXTERNAL_PURCHASE_TOKEN samples (its library's `signedExternalPurchaseToken…Notification`), signed
    /// for the test app and recorded by the real handler: such a notification has no `environment` field, and the view
    /// derives it as the verifier does, Sandbox iff `externalPurchaseId` starts with "SANDBOX".
    @Test func externalPurchaseTokenNotificationsCarryTheirEnvironment() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: try TestPKI())
            for sample in ["signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification"] {
                var payload = try #require(
                    try JSONSerialization.jsonObject(with: AppleSampleModels.data(named: sample)) as? [String: Any])
                var token = try #require(payload["externalPurchaseToken"] as? [String: Any])
                token["bundleId"] = "com.example.app"
                token["appAppleId"] = 1_234
                payload["externalPurchaseToken"] = token
                payload["notificationUUID"] = UUID().uuidString.lowercased()  // the two samples share one
                let jws = try pipeline.signer.sign(json: payload)
                try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(jws)"}"#)
            }
            try await pipeline.drain()
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'done'") == 2)
            let rows = try await texts(
                db,
                """
                SELECT environment || ' ' || notification_type || ' ' || subtype || ' ' || bundle_id || ' ' || app_apple_id
                FROM analytics.notifications ORDER BY environment
                """
            )
            #expect(
                rows == [
                    "Production EXTERNAL_PURCHASE_TOKEN UNREPORTED com.example.app 1234",
                    "Sandbox EXTERNAL_PURCHASE_TOKEN UNREPORTED com.example.app 1234",
                ])
        }
    }
}

/// A small ledger written straight into the facts tables and the read model (the projection is tested elsewhere).
///
/// - S1 `1000` monthly 9.99 USD, 2025-01-10 → 04-10 in three periods, then a billing grace period to 04-26
/// - S2 `2000` yearly 99.99 USD, 2025-01-15 → 2026-01-15
/// - S3 `3000` a one-week free trial from 2025-02-01, one paid month 02-08 → 03-08, then gone
/// - S4 `4000` a free trial 2025-02-05 → 02-12 (offerType 1, price 0, no offerDiscountType), never converted
/// - S5 `5000` family-shared monthly, 2025-01-20 → 03-20
/// - S6 `6000` monthly from 2025-01-05, refunded (REFUND_FULL) on 01-25
/// - S7 `7000` weekly 2.99 EUR, five weeks 2025-03-03 → 04-07
/// - S8 `8000` sandbox: a 5-minute period, one month at the sandbox's accelerated rate
/// - `9001` a consumable 4.99 USD, refunded at 50 % (REFUND_PRORATED)
enum AnalyticsFixture {
    static let statements: [String] = [
        #"""
        INSERT INTO transactions (fact_sha256, payload, standalone, first_event_id)
        SELECT sha256(convert_to(j::text, 'UTF8')), j, true, 1
        FROM (VALUES
            ('Production', '1000', '1001', 'com.example.monthly', 'Auto-Renewable Subscription', timestamptz '2025-01-10 00:00Z', timestamptz '2025-02-10 00:00Z', 9990, 'USD', NULL::int, NULL, 'PURCHASED', NULL::timestamptz, NULL, NULL::int, timestamptz '2025-01-10 00:00Z'),
            ('Production', '1000', '1002', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-02-10 00:00Z', '2025-03-10 00:00Z', 9990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-02-10 00:00Z'),
            ('Production', '1000', '1003', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-03-10 00:00Z', '2025-04-10 00:00Z', 9990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-10 00:00Z'),
            ('Production', '2000', '2001', 'com.example.yearly', 'Auto-Renewable Subscription', '2025-01-15 00:00Z', '2026-01-15 00:00Z', 99990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-01-15 00:00Z'),
            ('Production', '3000', '3001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-02-01 00:00Z', '2025-02-08 00:00Z', 0, 'USD', 1, 'FREE_TRIAL', 'PURCHASED', NULL, NULL, NULL, '2025-02-01 00:00Z'),
            ('Production', '3000', '3002', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-02-08 00:00Z', '2025-03-08 00:00Z', 9990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-02-08 00:00Z'),
            ('Production', '4000', '4001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-02-05 00:00Z', '2025-02-12 00:00Z', 0, 'USD', 1, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-02-05 00:00Z'),
            ('Production', '5000', '5001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-01-20 00:00Z', '2025-02-20 00:00Z', 9990, 'USD', NULL, NULL, 'FAMILY_SHARED', NULL, NULL, NULL, '2025-01-20 00:00Z'),
            ('Production', '5000', '5002', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-02-20 00:00Z', '2025-03-20 00:00Z', 9990, 'USD', NULL, NULL, 'FAMILY_SHARED', NULL, NULL, NULL, '2025-02-20 00:00Z'),
            ('Production', '6000', '6001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-01-05 00:00Z', '2025-02-05 00:00Z', 9990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-01-05 00:00Z'),
            ('Production', '6000', '6001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-01-05 00:00Z', '2025-02-05 00:00Z', 9990, 'USD', NULL, NULL, 'PURCHASED', '2025-01-25 00:00Z', 'REFUND_FULL', NULL, '2025-01-25 00:00Z'),
            ('Production', '7000', '7001', 'com.example.weekly', 'Auto-Renewable Subscription', '2025-03-03 00:00Z', '2025-03-10 00:00Z', 2990, 'EUR', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-03 00:00Z'),
            ('Production', '7000', '7002', 'com.example.weekly', 'Auto-Renewable Subscription', '2025-03-10 00:00Z', '2025-03-17 00:00Z', 2990, 'EUR', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-10 00:00Z'),
            ('Production', '7000', '7003', 'com.example.weekly', 'Auto-Renewable Subscription', '2025-03-17 00:00Z', '2025-03-24 00:00Z', 2990, 'EUR', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-17 00:00Z'),
            ('Production', '7000', '7004', 'com.example.weekly', 'Auto-Renewable Subscription', '2025-03-24 00:00Z', '2025-03-31 00:00Z', 2990, 'EUR', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-24 00:00Z'),
            ('Production', '7000', '7005', 'com.example.weekly', 'Auto-Renewable Subscription', '2025-03-31 00:00Z', '2025-04-07 00:00Z', 2990, 'EUR', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-31 00:00Z'),
            ('Sandbox', '8000', '8001', 'com.example.monthly', 'Auto-Renewable Subscription', '2025-03-01 10:00Z', '2025-03-01 10:05Z', 9990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-01 10:00Z'),
            ('Production', '9001', '9001', 'com.example.coins', 'Consumable', '2025-03-05 00:00Z', NULL, 4990, 'USD', NULL, NULL, 'PURCHASED', NULL, NULL, NULL, '2025-03-05 00:00Z'),
            ('Production', '9001', '9001', 'com.example.coins', 'Consumable', '2025-03-05 00:00Z', NULL, 4990, 'USD', NULL, NULL, 'PURCHASED', '2025-03-07 00:00Z', 'REFUND_PRORATED', 50000, '2025-03-07 00:00Z')
        ) AS v(environment, otid, tid, product, type, purchased, expires, price, currency, offer_type, discount, ownership, revoked, revocation_type, percentage, signed)
        CROSS JOIN LATERAL (SELECT jsonb_strip_nulls(jsonb_build_object(
            'environment', environment, 'bundleId', 'com.example.app', 'originalTransactionId', otid, 'transactionId', tid,
            'productId', product, 'type', type, 'purchaseDate', (extract(epoch FROM purchased) * 1000)::bigint,
            'expiresDate', (extract(epoch FROM expires) * 1000)::bigint, 'price', price, 'currency', currency,
            'offerType', offer_type, 'offerDiscountType', discount, 'inAppOwnershipType', ownership,
            'revocationDate', (extract(epoch FROM revoked) * 1000)::bigint, 'revocationReason', CASE WHEN revoked IS NOT NULL THEN 1 END,
            'revocationType', revocation_type, 'revocationPercentage', percentage, 'signedDate', (extract(epoch FROM signed) * 1000)::bigint)) AS j) AS x
        """#,
        #"""
        INSERT INTO renewal_infos (fact_sha256, payload, standalone, first_event_id)
        SELECT sha256(convert_to(j::text, 'UTF8')), j, true, 1
        FROM (VALUES (jsonb_build_object(
            'environment', 'Production', 'originalTransactionId', '1000', 'productId', 'com.example.monthly', 'autoRenewProductId', 'com.example.monthly',
            'autoRenewStatus', 1, 'isInBillingRetryPeriod', true, 'gracePeriodExpiresDate', 1745625600000, 'signedDate', 1744243200000))) AS v(j)
        """#,
        #"""
        INSERT INTO notifications (notification_uuid, payload, transaction_payload, renewal_payload, first_event_id, last_event_id, delivery_count)
        SELECT v.uuid,
               jsonb_build_object('notificationType', v.type, 'subtype', v.subtype, 'notificationUUID', v.uuid, 'version', '2.0',
                                  'signedDate', (extract(epoch FROM v.signed) * 1000)::bigint,
                                  'data', jsonb_strip_nulls(jsonb_build_object('environment', 'Production', 'bundleId', 'com.example.app', 'appAppleId', 1234, 'status', v.status))),
               (SELECT t.payload FROM transactions t WHERE t.transaction_id = v.tid ORDER BY t.signed_at DESC LIMIT 1),
               (SELECT r.payload FROM renewal_infos r WHERE r.original_transaction_id = v.renewal_otid LIMIT 1),
               v.event, v.event, v.deliveries
        FROM (VALUES
            ('00000000-0000-4000-8000-000000000001', 'SUBSCRIBED', 'INITIAL_BUY', timestamptz '2025-01-10 00:00:01Z', '1001', NULL, 1, 1, 1),
            ('00000000-0000-4000-8000-000000000002', 'DID_RENEW', NULL, '2025-02-10 00:00:01Z', '1002', NULL, 1, 2, 2),
            ('00000000-0000-4000-8000-000000000003', 'DID_RENEW', NULL, '2025-03-10 00:00:01Z', '1003', NULL, 1, 3, 1),
            ('00000000-0000-4000-8000-000000000004', 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', '2025-04-10 00:00:01Z', '1003', '1000', 4, 4, 1),
            ('00000000-0000-4000-8000-000000000005', 'SUBSCRIBED', 'INITIAL_BUY', '2025-01-15 00:00:01Z', '2001', NULL, 1, 5, 1),
            ('00000000-0000-4000-8000-000000000006', 'REFUND', NULL, '2025-01-25 00:00:01Z', '6001', NULL, 5, 6, 1),
            ('00000000-0000-4000-8000-000000000007', 'REFUND', NULL, '2025-03-07 00:00:01Z', '9001', NULL, NULL, 7, 1),
            ('00000000-0000-4000-8000-000000000008', 'TEST', NULL, '2025-01-01 00:00:00Z', NULL, NULL, NULL, 8, 1)
        ) AS v(uuid, type, subtype, signed, tid, renewal_otid, status, event, deliveries)
        """#,
        #"""
        INSERT INTO subscriptions (environment, original_transaction_id, bundle_id, product_id, status, entitled, latest_transaction_id, purchased_at, expires_at, price, currency, ownership)
        VALUES ('Production', '2000', 'com.example.app', 'com.example.yearly', 'active', true, '2001', '2025-01-15 00:00Z', '2026-01-15 00:00Z', 99990, 'USD', 'PURCHASED'),
               ('Production', '6000', 'com.example.app', 'com.example.monthly', 'revoked', false, '6001', '2025-01-05 00:00Z', '2025-02-05 00:00Z', 9990, 'USD', 'PURCHASED')
        """#,
        #"""
        INSERT INTO purchases (environment, transaction_id, original_transaction_id, bundle_id, product_id, product_type, purchased_at, quantity, price, currency, entitled, revoked_at, revocation_type)
        VALUES ('Production', '9001', '9001', 'com.example.app', 'com.example.coins', 'Consumable', '2025-03-05 00:00Z', 1, 4990, 'USD', false, '2025-03-07 00:00Z', 'REFUND_PRORATED')
        """#,
    ]
}
