import Foundation
import Logging
import PostgresNIO

@testable import StoreLedgerStore

/// The console's chart queries as they were before the charts were pre-aggregated (migration 0017), computed over
/// the analytics views themselves (`analytics.subscription_periods`, `analytics.refunds`) at request time: the
/// reference the aggregated ``ChartStore`` must equal for every filter.
struct ChartViewReference: Sendable {
    /// The Postgres client.
    let client: PostgresClient

    /// Paid subscriptions, trials and MRR at each month's end: `analytics.active_subscriptions_at` over the filtered
    /// periods (one row per month and currency; a month with none has one row with a nil currency).
    func activity(_ filter: ChartFilter, logger: Logger) async throws -> [ChartStore.Activity] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.query(
            """
            WITH months AS (
                SELECT g.m::date AS month, least((g.m + interval '1 month') AT TIME ZONE 'UTC', now()) AS at_time
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), periods AS MATERIALIZED (
                SELECT environment, original_transaction_id, transaction_id, period_start, active_until, is_paid,
                       is_trial AND ownership IS DISTINCT FROM 'FAMILY_SHARED' AS is_trial, currency, monthly_revenue
                FROM analytics.subscription_periods
                WHERE (\(environment)::text IS NULL OR environment = \(environment))
                  AND (\(app)::text IS NULL OR bundle_id = \(app))
                  AND (\(product)::text IS NULL OR product_id = \(product))
                  AND period_start <= (SELECT max(at_time) FROM months) AND active_until > (SELECT min(at_time) FROM months)
            ), active AS (
                SELECT DISTINCT ON (m.month, p.environment, p.original_transaction_id) m.month, p.*
                FROM months m JOIN periods p ON p.period_start <= m.at_time AND p.active_until > m.at_time
                ORDER BY m.month, p.environment, p.original_transaction_id, p.period_start DESC, p.transaction_id DESC
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', a.currency,
                   count(a.original_transaction_id) FILTER (WHERE a.is_paid),
                   count(a.original_transaction_id) FILTER (WHERE a.is_trial),
                   coalesce(round(sum(a.monthly_revenue), 2), 0)::float8
            FROM months m LEFT JOIN active a ON a.month = m.month
            GROUP BY m.month, a.currency
            ORDER BY m.month, a.currency NULLS FIRST
            """,
            logger: logger
        ).decode((Date, String?, Int, Int, Double).self).readToEnd()
            .map { ChartStore.Activity(month: $0.0, currency: $0.1, paid: $0.2, trials: $0.3, mrr: $0.4) }
    }

    /// Churn per month: `analytics.monthly_churn`'s query over the filtered periods, all environments together unless
    /// one is chosen.
    func churn(_ filter: ChartFilter, logger: Logger) async throws -> [ChartStore.Churn] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.query(
            """
            WITH months AS (
                SELECT g.m::date AS month, g.m AT TIME ZONE 'UTC' AS month_start,
                       least((g.m + interval '1 month') AT TIME ZONE 'UTC', now()) AS month_end
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), at_start AS (
                SELECT DISTINCT m.month, m.month_start, m.month_end, p.environment, p.original_transaction_id
                FROM months m
                JOIN analytics.subscription_periods p ON p.is_paid AND p.period_start <= m.month_start AND p.active_until > m.month_start
                WHERE (\(environment)::text IS NULL OR p.environment = \(environment))
                  AND (\(app)::text IS NULL OR p.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR p.product_id = \(product))
            ), flagged AS (
                -- One index probe per subscription and month (analytics.subscription_periods_subscription_idx).
                SELECT s.month, s.original_transaction_id,
                       NOT EXISTS (
                           SELECT 1 FROM analytics.subscription_periods e
                           WHERE e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
                             AND e.period_start <= s.month_end AND e.active_until > s.month_end
                             AND (\(app)::text IS NULL OR e.bundle_id = \(app))
                             AND (\(product)::text IS NULL OR e.product_id = \(product))) AS gone
                FROM at_start s
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', count(f.original_transaction_id), count(f.original_transaction_id) FILTER (WHERE f.gone)
            FROM months m LEFT JOIN flagged f ON f.month = m.month
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int).self).readToEnd()
            .map { ChartStore.Churn(month: $0.0, activeAtStart: $0.1, churned: $0.2) }
    }

    /// Refunds made in each month (by revocation date), per currency.
    func refunds(_ filter: ChartFilter, logger: Logger) async throws -> [ChartStore.Refunds] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.query(
            """
            WITH months AS (
                SELECT g.m::date AS month, g.m AT TIME ZONE 'UTC' AS month_start, (g.m + interval '1 month') AT TIME ZONE 'UTC' AS month_end
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), refunds AS MATERIALIZED (
                SELECT r.transaction_id, r.revoked_at, r.currency, r.refunded_amount
                FROM analytics.refunds r
                WHERE r.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE' AND r.ownership IS DISTINCT FROM 'FAMILY_SHARED'
                  AND (\(environment)::text IS NULL OR r.environment = \(environment))
                  AND (\(app)::text IS NULL OR r.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR r.product_id = \(product))
                  AND r.revoked_at >= (SELECT min(month_start) FROM months) AND r.revoked_at < (SELECT max(month_end) FROM months)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', r.currency, count(r.transaction_id), coalesce(sum(r.refunded_amount), 0)::float8
            FROM months m LEFT JOIN refunds r ON r.revoked_at >= m.month_start AND r.revoked_at < m.month_end
            GROUP BY m.month, r.currency
            ORDER BY m.month, r.currency NULLS FIRST
            """,
            logger: logger
        ).decode((Date, String?, Int, Double).self).readToEnd()
            .map { ChartStore.Refunds(month: $0.0, currency: $0.1, refunds: $0.2, amount: $0.3) }
    }

    /// Trials by the month they started, with how they ended.
    func trials(_ filter: ChartFilter, logger: Logger) async throws -> [ChartStore.Trials] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.query(
            """
            WITH months AS (
                SELECT g.m::date AS month
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), trials AS MATERIALIZED (
                -- analytics.trials (migrations 0014, 0027) over the snapshot: a subscription whose first period is a
                -- free trial, the purchaser's; converted = its first paid period exists and was not refunded; pending = no paid period, still
                -- giving access, auto-renew on; abandoned = neither (0037).
                SELECT date_trunc('month', f.period_start AT TIME ZONE 'UTC')::date AS cohort_month, f.original_transaction_id,
                       c.transaction_id IS NOT NULL AND c.revoked_at IS NULL AS converted,
                       c.transaction_id IS NULL AND f.active_until > now() AND NOT coalesce(r.auto_renew_status, 1) = 0 AS pending,
                       NOT (c.transaction_id IS NOT NULL AND c.revoked_at IS NULL)
                           AND NOT (c.transaction_id IS NULL AND f.active_until > now() AND NOT coalesce(r.auto_renew_status, 1) = 0)
                           AS abandoned
                FROM analytics.subscription_periods f
                LEFT JOIN LATERAL (
                    SELECT p.transaction_id, p.revoked_at FROM analytics.subscription_periods p
                    WHERE p.environment = f.environment AND p.original_transaction_id = f.original_transaction_id
                      AND p.period_start > f.period_start AND NOT p.is_trial AND p.price > 0
                    ORDER BY p.period_start, p.transaction_id LIMIT 1
                ) c ON true
                LEFT JOIN LATERAL (
                    SELECT ri.auto_renew_status FROM renewal_infos ri
                    WHERE ri.environment = f.environment AND ri.original_transaction_id = f.original_transaction_id
                      AND ri.signed_at <= least(f.period_end, now())
                    ORDER BY ri.signed_at DESC, ri.fact_sha256 DESC LIMIT 1
                ) r ON true
                WHERE f.period_number = 1 AND f.is_trial AND f.ownership IS DISTINCT FROM 'FAMILY_SHARED'
                  AND (\(environment)::text IS NULL OR f.environment = \(environment))
                  AND (\(product)::text IS NULL OR f.product_id = \(product))
                  AND (\(app)::text IS NULL OR f.bundle_id = \(app))
                  AND f.period_start >= (SELECT min(month) FROM months)::timestamp AT TIME ZONE 'UTC'
                  AND f.period_start < ((SELECT max(month) FROM months) + interval '1 month') AT TIME ZONE 'UTC'
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC', count(t.original_transaction_id),
                   count(t.original_transaction_id) FILTER (WHERE t.converted),
                   count(t.original_transaction_id) FILTER (WHERE t.pending),
                   count(t.original_transaction_id) FILTER (WHERE t.abandoned)
            FROM months m LEFT JOIN trials t ON t.cohort_month = m.month
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int, Int, Int).self).readToEnd()
            .map { ChartStore.Trials(month: $0.0, trials: $0.1, converted: $0.2, pending: $0.3, abandoned: $0.4) }
    }

    /// Billing periods that began in each month: first periods and later ones.
    func starts(_ filter: ChartFilter, logger: Logger) async throws -> [ChartStore.Starts] {
        let (from, to, app, environment, product) = (filter.fromMonth, filter.toMonth, filter.app, filter.environment, filter.product)
        return try await client.query(
            """
            WITH months AS (
                SELECT g.m::date AS month, g.m AT TIME ZONE 'UTC' AS month_start, (g.m + interval '1 month') AT TIME ZONE 'UTC' AS month_end
                FROM generate_series(\(from)::timestamptz AT TIME ZONE 'UTC', \(to)::timestamptz AT TIME ZONE 'UTC', interval '1 month') AS g(m)
            ), periods AS MATERIALIZED (
                SELECT p.transaction_id, p.period_start, p.period_number
                FROM analytics.subscription_periods p
                WHERE (\(environment)::text IS NULL OR p.environment = \(environment))
                  AND (\(app)::text IS NULL OR p.bundle_id = \(app))
                  AND (\(product)::text IS NULL OR p.product_id = \(product))
                  AND p.period_start >= (SELECT min(month_start) FROM months) AND p.period_start < (SELECT max(month_end) FROM months)
            )
            SELECT m.month::timestamp AT TIME ZONE 'UTC',
                   count(p.transaction_id) FILTER (WHERE p.period_number = 1),
                   count(p.transaction_id) FILTER (WHERE p.period_number > 1)
            FROM months m LEFT JOIN periods p ON p.period_start >= m.month_start AND p.period_start < m.month_end
            GROUP BY m.month
            ORDER BY m.month
            """,
            logger: logger
        ).decode((Date, Int, Int).self).readToEnd()
            .map { ChartStore.Starts(month: $0.0, new: $0.1, renewing: $0.2) }
    }
}
