package import Foundation
package import Logging
package import PostgresNIO

/// The numbers behind the console's charts, per UTC month of a bounded range, with the definitions the analytics views
/// document (docs/analytics.md).
///
/// ``refresh(minimumAge:logger:)`` (in the background) retakes snapshots of the views (`console_chart_periods` =
/// `analytics.subscription_periods`, `console_chart_refunds` = `analytics.refunds`, migration 0015) and sums every
/// chart's numerators and denominators per month, environment, app, product and currency into `console_chart_months`
/// (migration 0017); a chart read only adds up the rows its filter selects, so it costs the same on any ledger size.
/// The numbers are those of the moment the snapshot was taken (its `now`), which ``snapshot(logger:)`` tells.
package struct ChartStore: Sendable {
    /// Paid subscriptions, trials and MRR at the end of a month (now for the current month), per currency.
    package struct Activity: Sendable, Equatable {
        /// The month (its first day).
        package var month: Date
        /// The currency (nil in a month with no active subscription).
        package var currency: String?
        /// Paid subscriptions giving access at the month's end.
        package var paid: Int
        /// Free trials giving access at the month's end.
        package var trials: Int
        /// Monthly recurring revenue in currency units (RevenueCat's normalisation, `analytics.subscription_periods`).
        package var mrr: Double
    }

    /// Churn in a month (`analytics.monthly_churn`'s definition).
    package struct Churn: Sendable, Equatable {
        /// The month.
        package var month: Date
        /// Paid subscriptions active at the month's start.
        package var activeAtStart: Int
        /// Of those, the ones not active at its end (net of resubscriptions).
        package var churned: Int
    }

    /// Refunds made in a month, per currency (`analytics.refunds`, Family Sharing revocations excluded).
    package struct Refunds: Sendable, Equatable {
        /// The month.
        package var month: Date
        /// The currency (nil in a month without refunds).
        package var currency: String?
        /// How many transactions were refunded in the month.
        package var refunds: Int
        /// The amount refunded, in currency units.
        package var amount: Double
    }

    /// Trials by the month they started (`analytics.trials`).
    package struct Trials: Sendable, Equatable {
        /// The cohort month.
        package var month: Date
        /// Trials started.
        package var trials: Int
        /// Converted to a paid period whose payment was not refunded.
        package var converted: Int
        /// Still running with auto-renew on.
        package var pending: Int
        /// Ended, or running with auto-renew off, without converting.
        package var abandoned: Int
    }

    /// Billing periods that began in a month: first periods (new subscriptions) and later ones (renewals,
    /// resubscriptions, trial conversions), from `analytics.subscription_periods`.
    package struct Starts: Sendable, Equatable {
        /// The month.
        package var month: Date
        /// First periods of a subscription.
        package var new: Int
        /// Later periods.
        package var renewing: Int
    }

    /// The Postgres client.
    package let client: PostgresClient

    /// Creates the store.
    package init(client: PostgresClient) {
        self.client = client
    }

    /// The snapshots' state: when they were last taken (nil: never), how long that took, and whether events arrived
    /// since (the newest event id then and now differ).
    package func snapshot(logger: Logger) async throws -> (takenAt: Date?, durationMilliseconds: Double, behind: Bool) {
        let row = try await client.rows(
            """
            SELECT s.refreshed_at, coalesce(s.duration_ms, 0), s.last_event_id IS DISTINCT FROM (SELECT max(id) FROM events)
            FROM (SELECT 1) one LEFT JOIN console_chart_snapshot s ON s.id = 1
            """,
            logger: logger
        ).decode((Date?, Double, Bool).self).first
        return (row?.0, row?.1 ?? 0, row?.2 ?? true)
    }

    /// Marks the snapshots out of date on `connection`, in its transaction: what they were taken from changed without an
    /// event to say so (a rebuild's swap), so the charts say they are behind (and a small ledger's wait for new ones).
    package static func markOutOfDate(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("UPDATE console_chart_snapshot SET last_event_id = NULL", logger: logger).readToEnd()
    }

    /// Whether the ledger holds at most `transactions` transactions (a bounded count): a first snapshot of such a ledger
    /// is taken in well under a second, so a page may wait for it.
    package func isSmall(atMost transactions: Int, logger: Logger) async throws -> Bool {
        let count =
            try await client.rows(
                "SELECT count(*) FROM (SELECT 1 FROM transactions LIMIT \(transactions + 1)) t", logger: logger
            ).decode(Int.self).first ?? 0
        return count <= transactions
    }

    /// Retakes the snapshots and the charts' sums unless they are younger than `minimumAge` seconds or another process
    /// is retaking them (an advisory lock); returns whether it did. Everything is written in one transaction, so the
    /// charts keep answering from the previous sums meanwhile and switch to the new ones at once.
    @discardableResult
    package func refresh(minimumAge: Double = 0, logger: Logger) async throws -> Bool {
        try await client.inTransaction(logger: logger) { connection in
            let locked =
                try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(hashtext('storeledger.console_chart_snapshot'))", logger: logger
                ).decode(Bool.self).firstAfterReadingAll() ?? false
            guard locked else { return false }
            let fresh =
                try await connection.query(
                    "SELECT count(*) FROM console_chart_snapshot WHERE refreshed_at > now() - make_interval(secs => \(minimumAge))", logger: logger
                ).decode(Int.self).firstAfterReadingAll() ?? 0
            guard fresh == 0 else { return false }
            let started = Date()
            // The newest event before the snapshots are taken: one arriving while they are is news for the next.
            let lastEvent = try await connection.query("SELECT max(id) FROM events", logger: logger).decode(Int64?.self).firstAfterReadingAll() ?? nil
            // Nothing but this transaction reads the period and refund snapshots any more: a plain refresh (faster than
            // CONCURRENTLY) holds them only while the sums are taken.
            for statement in Self.refreshStatements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).readToEnd()
            }
            let duration = Date().timeIntervalSince(started) * 1_000
            try await connection.query(
                """
                INSERT INTO console_chart_snapshot (id, refreshed_at, duration_ms, last_event_id)
                VALUES (1, now(), \(duration), \(lastEvent))
                ON CONFLICT (id) DO UPDATE
                SET refreshed_at = excluded.refreshed_at, duration_ms = excluded.duration_ms, last_event_id = excluded.last_event_id
                """,
                logger: logger
            ).readToEnd()
            return true
        }
    }

    /// The refresh, in order, inside one transaction (so `now()` is one instant throughout: the snapshot's time). The
    /// month boundaries are UTC; the end of a past month is the next month's first instant, the current month's is now.
    static let refreshStatements: [String] = [
        "REFRESH MATERIALIZED VIEW console_chart_periods",
        "REFRESH MATERIALIZED VIEW console_chart_refunds",
        "ANALYZE console_chart_periods",
        "ANALYZE console_chart_refunds",
        "DELETE FROM console_chart_months",
        // Every period at the end of each month it gives access at (period_start <= end < active_until); a trial is the
        // purchaser's own (migration 0030: a Family Sharing member's copy is no trial).
        """
        CREATE TEMPORARY TABLE console_chart_ends ON COMMIT DROP AS
        SELECT (b.b - interval '1 month')::date AS month, p.environment, p.original_transaction_id, p.transaction_id, p.period_start,
               p.bundle_id, p.product_id, p.currency, p.is_paid, p.is_trial AND p.ownership IS DISTINCT FROM 'FAMILY_SHARED' AS is_trial,
               p.monthly_revenue
        FROM console_chart_periods p
        CROSS JOIN LATERAL generate_series(
            date_trunc('month', p.period_start AT TIME ZONE 'UTC'),
            least(date_trunc('month', p.active_until AT TIME ZONE 'UTC'), date_trunc('month', now() AT TIME ZONE 'UTC')),
            interval '1 month') AS b(b)
        WHERE b.b AT TIME ZONE 'UTC' >= p.period_start AND b.b AT TIME ZONE 'UTC' < p.active_until
        UNION ALL
        SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date, p.environment, p.original_transaction_id, p.transaction_id,
               p.period_start, p.bundle_id, p.product_id, p.currency, p.is_paid, p.is_trial AND p.ownership IS DISTINCT FROM 'FAMILY_SHARED',
               p.monthly_revenue
        FROM console_chart_periods p
        WHERE p.period_start <= now() AND p.active_until > now()
        """,
        "ANALYZE console_chart_ends",
        // Active at each month's end: the subscription's latest period then (analytics.active_subscriptions_at), among
        // all its periods and among each product's.
        """
        INSERT INTO console_chart_months (source, month, environment, bundle_id, product_id, all_products, currency, paid_at_end, trials_at_end,
                                          mrr_at_end)
        SELECT 'activity', month, environment, bundle_id, CASE WHEN all_products THEN NULL ELSE product_id END, all_products, currency,
               count(original_transaction_id) FILTER (WHERE is_paid), count(original_transaction_id) FILTER (WHERE is_trial),
               sum(monthly_revenue)
        FROM (
            (SELECT DISTINCT ON (e.month, e.environment, e.original_transaction_id) true AS all_products, e.*
             FROM console_chart_ends e
             ORDER BY e.month, e.environment, e.original_transaction_id, e.period_start DESC, e.transaction_id DESC)
            UNION ALL
            (SELECT DISTINCT ON (e.month, e.environment, e.original_transaction_id, e.product_id) false, e.*
             FROM console_chart_ends e
             ORDER BY e.month, e.environment, e.original_transaction_id, e.product_id, e.period_start DESC, e.transaction_id DESC)
        ) chosen
        GROUP BY 2, 3, 4, 5, 6, 7
        """,
        // Churn (analytics.monthly_churn): paid subscriptions active at a month's first instant (months after the
        // current one too, as far as a period reaches, at most ten years), and whether any of their periods (of the
        // product, per product) is active at the month's end (now for the current and later months).
        """
        INSERT INTO console_chart_months (source, month, environment, bundle_id, product_id, all_products, active_at_start, churned)
        WITH this_month AS (
            SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS month
        ), starts AS MATERIALIZED (
            SELECT b.b::date AS month, p.environment, p.original_transaction_id, p.bundle_id, p.product_id
            FROM console_chart_periods p
            CROSS JOIN LATERAL generate_series(
                date_trunc('month', p.period_start AT TIME ZONE 'UTC'),
                least(date_trunc('month', p.active_until AT TIME ZONE 'UTC'), date_trunc('month', now() AT TIME ZONE 'UTC') + interval '10 years'),
                interval '1 month') AS b(b)
            WHERE p.is_paid AND b.b AT TIME ZONE 'UTC' >= p.period_start AND b.b AT TIME ZONE 'UTC' < p.active_until
        ), all_starts AS (
            SELECT month, environment, original_transaction_id, min(bundle_id) AS bundle_id
            FROM starts GROUP BY month, environment, original_transaction_id
        ), all_ends AS (
            SELECT DISTINCT month, environment, original_transaction_id FROM console_chart_ends
        ), product_starts AS (
            SELECT month, environment, original_transaction_id, product_id, min(bundle_id) AS bundle_id
            FROM starts GROUP BY month, environment, original_transaction_id, product_id
        ), product_ends AS (
            SELECT DISTINCT month, environment, original_transaction_id, product_id FROM console_chart_ends
        )
        SELECT 'churn', s.month, s.environment, s.bundle_id, NULL, true, count(*), count(*) FILTER (WHERE e.month IS NULL)
        FROM all_starts s
        CROSS JOIN this_month t
        LEFT JOIN all_ends e
               ON e.month = least(s.month, t.month) AND e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
        -- A month after the snapshot's has no churn yet (every subscription counted in it was still active): no row, as in
        -- analytics.monthly_churn, rather than a made-up 0 %.
        WHERE s.month <= t.month
        GROUP BY s.month, s.environment, s.bundle_id
        UNION ALL
        SELECT 'churn', s.month, s.environment, s.bundle_id, s.product_id, false, count(*), count(*) FILTER (WHERE e.month IS NULL)
        FROM product_starts s
        CROSS JOIN this_month t
        LEFT JOIN product_ends e
               ON e.month = least(s.month, t.month) AND e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
              AND e.product_id = s.product_id
        WHERE s.month <= t.month
        GROUP BY s.month, s.environment, s.bundle_id, s.product_id
        """,
        // Billing periods by the month they began: a subscription's first, and later ones.
        """
        INSERT INTO console_chart_months (source, month, environment, bundle_id, product_id, all_products, new_periods, renewing_periods)
        SELECT 'starts', date_trunc('month', period_start AT TIME ZONE 'UTC')::date, environment, bundle_id, product_id, false,
               count(transaction_id) FILTER (WHERE period_number = 1), count(transaction_id) FILTER (WHERE period_number > 1)
        FROM console_chart_periods
        WHERE period_start IS NOT NULL
        GROUP BY 2, 3, 4, 5
        """,
        // Refunds by the month of the revocation, Family Sharing revocations excluded (FAMILY_REVOKE, and any revoked
        // FAMILY_SHARED transaction: payloads before 2025 carry no revocationType; migration 0026).
        """
        INSERT INTO console_chart_months (source, month, environment, bundle_id, product_id, all_products, currency, refunds, refunded_amount)
        SELECT 'refunds', date_trunc('month', revoked_at AT TIME ZONE 'UTC')::date, environment, bundle_id, product_id, false, currency,
               count(transaction_id), sum(refunded_amount)
        FROM console_chart_refunds
        WHERE revocation_type IS DISTINCT FROM 'FAMILY_REVOKE' AND ownership IS DISTINCT FROM 'FAMILY_SHARED' AND revoked_at IS NOT NULL
        GROUP BY 2, 3, 4, 5, 7
        """,
        // analytics.trials (migrations 0014, 0027) over the snapshot: a subscription whose first period is a free
        // trial, the purchaser's (a Family Sharing member's copy is none); converted = its first paid period exists
        // and was not refunded; pending = no paid period, still giving access, auto-renew on; abandoned = neither
        // (migration 0037: auto-renew off, a first payment failed or refunded). By the trial's start month.
        """
        INSERT INTO console_chart_months (source, month, environment, bundle_id, product_id, all_products, trials_started, trials_converted,
                                          trials_pending, trials_abandoned)
        SELECT 'trials', date_trunc('month', t.period_start AT TIME ZONE 'UTC')::date, t.environment, t.bundle_id, t.product_id, false,
               count(t.original_transaction_id), count(t.original_transaction_id) FILTER (WHERE t.converted),
               count(t.original_transaction_id) FILTER (WHERE t.pending),
               count(t.original_transaction_id) FILTER (WHERE NOT t.converted AND NOT t.pending)
        FROM (
            SELECT f.period_start, f.environment, f.bundle_id, f.product_id, f.original_transaction_id,
                   c.transaction_id IS NOT NULL AND c.revoked_at IS NULL AS converted,
                   c.transaction_id IS NULL AND f.active_until > now() AND NOT coalesce(r.auto_renew_status, 1) = 0 AS pending
            FROM console_chart_periods f
            LEFT JOIN LATERAL (
                SELECT p.transaction_id, p.revoked_at FROM console_chart_periods p
                WHERE p.environment = f.environment AND p.original_transaction_id = f.original_transaction_id
                  AND p.period_start > f.period_start AND NOT p.is_trial AND (p.price > 0 OR p.price IS NULL)
                ORDER BY p.period_start, p.transaction_id LIMIT 1
            ) c ON true
            LEFT JOIN LATERAL (
                SELECT ri.auto_renew_status FROM renewal_infos ri
                WHERE ri.environment = f.environment AND ri.original_transaction_id = f.original_transaction_id
                  AND ri.signed_at <= least(f.period_end, now())
                ORDER BY ri.signed_at DESC, ri.fact_sha256 DESC LIMIT 1
            ) r ON true
            WHERE f.period_number = 1 AND f.is_trial AND f.ownership IS DISTINCT FROM 'FAMILY_SHARED' AND f.period_start IS NOT NULL
        ) t
        GROUP BY 2, 3, 4, 5
        """,
    ]

    /// Paid subscriptions, trials and MRR at each month's end (`analytics.active_subscriptions_at`; a month after the
    /// snapshot's reads the snapshot's time), one row per month and currency; a month with none has one row with a nil
    /// currency.
    package func activity(_ filter: ChartFilter, logger: Logger) async throws -> [Activity] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.rows(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), taken AS (
                SELECT (SELECT date_trunc('month', refreshed_at AT TIME ZONE 'UTC')::date FROM console_chart_snapshot WHERE id = 1) AS month
            ), sums AS (
                SELECT m.month, c.currency, c.paid_at_end, c.trials_at_end, c.mrr_at_end
                FROM months m
                CROSS JOIN taken t
                JOIN console_chart_months c ON c.month = least(m.month, t.month)
                WHERE c.source = 'activity' AND c.all_products = (\(product)::text IS NULL)
                  AND (\(environment)::text IS NULL OR c.environment = \(environment))
                  AND (\(app)::text IS NULL OR c.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR c.product_id = \(product))
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', s.currency, coalesce(sum(s.paid_at_end), 0)::int8,
                   coalesce(sum(s.trials_at_end), 0)::int8, coalesce(round(sum(s.mrr_at_end), 2), 0)::float8
            FROM months m LEFT JOIN sums s ON s.month = m.month
            GROUP BY m.month, s.currency
            ORDER BY m.month, s.currency NULLS FIRST
            """,
            logger: logger
        ).decode((Date, String?, Int, Int, Double).self)
            .map { Activity(month: $0.0, currency: $0.1, paid: $0.2, trials: $0.3, mrr: $0.4) }
    }

    /// Churn per month (`analytics.monthly_churn`'s definition), all environments together unless one is chosen.
    package func churn(_ filter: ChartFilter, logger: Logger) async throws -> [Churn] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.rows(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', coalesce(sum(c.active_at_start), 0)::int8, coalesce(sum(c.churned), 0)::int8
            FROM months m
            LEFT JOIN console_chart_months c
                   ON c.month = m.month AND c.source = 'churn' AND c.all_products = (\(product)::text IS NULL)
                  AND (\(environment)::text IS NULL OR c.environment = \(environment))
                  AND (\(app)::text IS NULL OR c.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR c.product_id = \(product))
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int).self)
            .map { Churn(month: $0.0, activeAtStart: $0.1, churned: $0.2) }
    }

    /// Refunds made in each month (by revocation date), per currency.
    package func refunds(_ filter: ChartFilter, logger: Logger) async throws -> [Refunds] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.rows(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', c.currency, coalesce(sum(c.refunds), 0)::int8, coalesce(sum(c.refunded_amount), 0)::float8
            FROM months m
            LEFT JOIN console_chart_months c
                   ON c.month = m.month AND c.source = 'refunds' AND NOT c.all_products
                  AND (\(environment)::text IS NULL OR c.environment = \(environment))
                  AND (\(app)::text IS NULL OR c.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR c.product_id = \(product))
            GROUP BY m.month, c.currency
            ORDER BY m.month, c.currency NULLS FIRST
            """,
            logger: logger
        ).decode((Date, String?, Int, Double).self)
            .map { Refunds(month: $0.0, currency: $0.1, refunds: $0.2, amount: $0.3) }
    }

    /// Trials by the month they started, with how they ended (pending: at the snapshot's time).
    package func trials(_ filter: ChartFilter, logger: Logger) async throws -> [Trials] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.rows(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', coalesce(sum(c.trials_started), 0)::int8, coalesce(sum(c.trials_converted), 0)::int8,
                   coalesce(sum(c.trials_pending), 0)::int8, coalesce(sum(c.trials_abandoned), 0)::int8
            FROM months m
            LEFT JOIN console_chart_months c
                   ON c.month = m.month AND c.source = 'trials' AND NOT c.all_products
                  AND (\(environment)::text IS NULL OR c.environment = \(environment))
                  AND (\(app)::text IS NULL OR c.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR c.product_id = \(product))
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int, Int, Int).self)
            .map { Trials(month: $0.0, trials: $0.1, converted: $0.2, pending: $0.3, abandoned: $0.4) }
    }

    /// Billing periods that began in each month: first periods and later ones.
    package func starts(_ filter: ChartFilter, logger: Logger) async throws -> [Starts] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.rows(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', coalesce(sum(c.new_periods), 0)::int8, coalesce(sum(c.renewing_periods), 0)::int8
            FROM months m
            LEFT JOIN console_chart_months c
                   ON c.month = m.month AND c.source = 'starts' AND NOT c.all_products
                  AND (\(environment)::text IS NULL OR c.environment = \(environment))
                  AND (\(app)::text IS NULL OR c.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR c.product_id = \(product))
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int).self)
            .map { Starts(month: $0.0, new: $0.1, renewing: $0.2) }
    }
}
