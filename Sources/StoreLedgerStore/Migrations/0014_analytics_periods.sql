-- Analytics numbers a founder can check against RevenueCat (issue 13, "The numbers must be right before they are
-- drawn"). Replaces views of 0008 in place (same columns; new ones only appended at the end) and adds three.
--
-- 1. A period's billing length comes from its product, never from that one period's dates: the published catalog's
--    `period` when it lists the product, else the duration covering most of the subscription's own regular
--    periods of that product (when it has two or more), else the product's usual duration in that environment,
--    and only then the period's own length. A billing recovery inside a grace period keeps Apple's original
--    renewal date, so the recovered period is short (13 days on a monthly): it used to be classed P1W and its
--    9.99 counted as 43.29 of MRR. Free trials and pay-up-front offers keep their own (offer) duration: their
--    price, if any, is for that duration.
-- 2. A billing grace period belongs to the billing failure at one period's expiry: the DID_FAIL_TO_RENEW /
--    GRACE_PERIOD notification about that period's transaction, or a renewal info in billing retry whose grace end
--    falls within 28 days after the period's end with no other period of the subscription ending in between. Any
--    grace end within 28 days used to do: a subscription that expired voluntarily and resubscribed into a grace
--    period had its old period stretched over the gap.
-- 3. RevenueCat's definitions (docs/analytics.md, per metric): weekly prices x 4 (28 days), not x 52/12; a refund
--    does not rewrite past MRR (a refunded period counts until its revocation, which ends its access); a trial
--    whose first payment was refunded did not convert; a trial whose auto-renew is off is abandoned, not pending;
--    churn nets out resubscriptions (`churned`; the gross `lapsed` beside it).
-- 4. New views: mrr_by_product, new_subscriptions_by_month, refund_rate_by_month.

-- RevenueCat normalises a week to 4 per month (a 28-day month), the other durations by calendar months.
CREATE OR REPLACE VIEW analytics.billing_periods (billing_period, description, nominal_days, sandbox_minutes, per_month_numerator, per_month_denominator) AS
VALUES ('P1W', '1 week',    7.0,      3,  4,  1),
       ('P1M', '1 month',   30.436875, 5,  1,  1),
       ('P2M', '2 months',  60.87375, 10,  1,  2),
       ('P3M', '3 months',  91.310625, 15, 1,  3),
       ('P6M', '6 months', 182.62125, 30,  1,  6),
       ('P1Y', '1 year',   365.2425,  60,  1, 12);

COMMENT ON VIEW analytics.billing_periods IS 'Standard subscription durations and the factor that normalises a period''s price to a month (RevenueCat: weekly x 4).';

-- The standard duration nearest to an ISO 8601 period (P7D, P1W, P4W, P1M, P12M, P1Y); NULL when it is not one.
CREATE FUNCTION analytics.standard_billing_period(iso_period text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
    SELECT p.billing_period
    FROM (VALUES ('P1W', 7.0::float8), ('P1M', 30.436875), ('P2M', 60.87375),
                 ('P3M', 91.310625), ('P6M', 182.62125), ('P1Y', 365.2425)) AS p(billing_period, days)
    WHERE iso_period ~ '^P[1-9][0-9]{0,3}[DWMY]$'
    ORDER BY abs(ln(
        substr(iso_period, 2, length(iso_period) - 2)::float8
        * CASE right(iso_period, 1) WHEN 'D' THEN 1.0 WHEN 'W' THEN 7.0 WHEN 'M' THEN 30.436875 ELSE 365.2425 END
        / p.days))
    LIMIT 1
);

COMMENT ON FUNCTION analytics.standard_billing_period(text) IS 'Nearest standard duration (P1W ... P1Y) of an ISO 8601 period such as a catalog period or an offerPeriod.';

CREATE OR REPLACE VIEW analytics.subscription_periods AS
WITH periods AS (
    SELECT t.*,
           analytics.billing_period(t.purchased_at, t.expires_at, t.environment) AS own_period,
           lead(t.purchased_at) OVER w AS next_period_start,
           row_number() OVER w AS period_number,
           -- The next later end of a period of the same subscription (to tell which expiry a grace period follows).
           min(t.expires_at) OVER (PARTITION BY t.environment, t.original_transaction_id ORDER BY t.expires_at
                                   RANGE BETWEEN interval '1 microsecond' FOLLOWING AND UNBOUNDED FOLLOWING) AS next_period_end
    FROM analytics.transactions t
    WHERE (t.product_type = 'Auto-Renewable Subscription' OR (t.product_type IS NULL AND t.subscription_group IS NOT NULL))
      AND t.purchased_at IS NOT NULL
      AND t.expires_at IS NOT NULL
    WINDOW w AS (PARTITION BY t.environment, t.original_transaction_id ORDER BY t.purchased_at, t.transaction_id)
), regular AS (
    -- Periods whose length is the product's billing period (not a trial, not a pay-up-front offer).
    SELECT environment, original_transaction_id, product_id, own_period,
           extract(epoch FROM expires_at - purchased_at) AS seconds
    FROM periods
    WHERE own_period IS NOT NULL AND NOT is_trial AND offer_discount_type IS DISTINCT FROM 'PAY_UP_FRONT'
), subscription_dominant AS (
    -- The duration covering most of the subscription's regular periods of the product, when it has two or more.
    SELECT DISTINCT ON (environment, original_transaction_id, product_id)
           environment, original_transaction_id, product_id, own_period AS billing_period
    FROM (
        SELECT environment, original_transaction_id, product_id, own_period, sum(seconds) AS covered,
               sum(count(*)) OVER (PARTITION BY environment, original_transaction_id, product_id) AS periods
        FROM regular
        GROUP BY environment, original_transaction_id, product_id, own_period
    ) s
    WHERE s.periods >= 2
    ORDER BY environment, original_transaction_id, product_id, covered DESC, own_period
), product_usual AS (
    -- The product's most frequent duration in the environment.
    SELECT DISTINCT ON (environment, product_id) environment, product_id, own_period AS billing_period
    FROM regular
    GROUP BY environment, product_id, own_period
    ORDER BY environment, product_id, count(*) DESC, sum(seconds) DESC, own_period
), classified AS (
    SELECT p.*,
           CASE WHEN p.is_trial OR p.offer_discount_type = 'PAY_UP_FRONT'
                THEN coalesce(analytics.standard_billing_period(p.offer_period), p.own_period)
                ELSE coalesce(analytics.standard_billing_period(c.period), sd.billing_period, pu.billing_period, p.own_period)
           END AS billing_period
    FROM periods p
    LEFT JOIN public.product_catalog c ON c.product_id = p.product_id
    LEFT JOIN subscription_dominant sd
           ON sd.environment = p.environment AND sd.original_transaction_id = p.original_transaction_id AND sd.product_id = p.product_id
    LEFT JOIN product_usual pu ON pu.environment = p.environment AND pu.product_id = p.product_id
)
SELECT
    p.environment,
    p.original_transaction_id,
    p.period_number,
    p.transaction_id,
    p.web_order_line_item_id,
    p.bundle_id,
    p.product_id,
    p.subscription_group,
    p.transaction_reason,
    p.purchased_at                                                     AS period_start,
    p.expires_at                                                       AS period_end,
    g.grace_period_expires_at,
    -- Access ends at the period's end (or its billing grace period's), at a revocation, or when an upgrade
    -- replaced it, whichever is first.
    least(greatest(p.expires_at, g.grace_period_expires_at),
          p.revoked_at,
          CASE WHEN p.is_upgraded THEN p.next_period_start END)        AS active_until,
    p.billing_period,
    p.is_trial,
    NOT p.is_trial AND p.ownership IS DISTINCT FROM 'FAMILY_SHARED'    AS is_paid,
    p.offer_type,
    p.offer_discount_type,
    p.offer_id,
    p.ownership,
    p.is_upgraded,
    p.revoked_at,
    p.revocation_type,
    p.price,
    p.currency,
    p.price_amount,
    -- A refunded period counts while it gave access (RevenueCat does not rewrite past MRR): its revocation ends
    -- active_until, which takes it out of MRR from then on.
    CASE WHEN p.is_trial OR p.ownership = 'FAMILY_SHARED' OR p.price IS NULL THEN 0
         ELSE p.price_amount * b.per_month_numerator / b.per_month_denominator
    END                                                                AS monthly_revenue,
    p.app_account_token,
    p.storefront
FROM classified p
LEFT JOIN analytics.billing_periods b ON b.billing_period = p.billing_period
LEFT JOIN LATERAL (
    -- The billing grace period that followed a failure to renew at this period's expiry (3 to 28 days long).
    SELECT max(x.grace_period_expires_at) AS grace_period_expires_at
    FROM (
        SELECT to_timestamp((n.renewal_payload ->> 'gracePeriodExpiresDate')::float8 / 1000) AS grace_period_expires_at
        FROM public.notifications n
        WHERE n.environment = p.environment AND n.transaction_id = p.transaction_id
          AND n.notification_type = 'DID_FAIL_TO_RENEW' AND n.subtype = 'GRACE_PERIOD'
        UNION ALL
        SELECT r.grace_period_expires_at
        FROM public.renewal_infos r
        WHERE r.environment = p.environment
          AND r.original_transaction_id = p.original_transaction_id
          AND r.is_in_billing_retry
          -- no other period of the subscription ends between this one's end and the grace end
          AND (p.next_period_end IS NULL OR p.next_period_end >= r.grace_period_expires_at)
    ) x
    WHERE x.grace_period_expires_at > p.expires_at
      AND x.grace_period_expires_at <= p.expires_at + interval '28 days'
) g ON true;

COMMENT ON VIEW analytics.subscription_periods IS 'One row per auto-renewable transaction (a billing period), with the product''s billing period, monthly revenue and active_until.';
COMMENT ON COLUMN analytics.subscription_periods.billing_period IS 'The product''s billing period: catalog period, else the subscription''s dominant duration, else the product''s usual one (trials and pay-up-front offers: their own).';
COMMENT ON COLUMN analytics.subscription_periods.monthly_revenue IS 'Price normalised per month in currency units (RevenueCat: weekly x 4, yearly / 12); 0 for free trials, family-shared and unpriced periods. A refunded period counts until its revocation.';
COMMENT ON COLUMN analytics.subscription_periods.grace_period_expires_at IS 'End of the billing grace period that followed a failure to renew at this period''s end.';

-- Churn: `churned` nets out resubscriptions (RevenueCat: subscriptions lost in the period that have not resubscribed
-- by its end); `lapsed` counts every subscription of the start that lost access at some instant of the month,
-- `resubscribed` those of them active again at its end.
CREATE OR REPLACE VIEW analytics.monthly_churn AS
WITH periods AS MATERIALIZED (
    SELECT environment, original_transaction_id, period_start, active_until, is_paid FROM analytics.subscription_periods
), at_start AS (
    SELECT DISTINCT m.month, m.month_start, least(m.month_end, now()) AS month_end, m.complete, p.environment, p.original_transaction_id
    FROM analytics.months m
    JOIN periods p ON p.is_paid AND p.period_start <= m.month_start AND p.active_until > m.month_start
), flagged AS (
    SELECT s.*,
           NOT EXISTS (
               SELECT 1 FROM periods e
               WHERE e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
                 AND e.period_start <= s.month_end AND e.active_until > s.month_end) AS gone,
           EXISTS (
               SELECT 1 FROM periods e
               WHERE e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
                 AND e.active_until > s.month_start AND e.active_until <= s.month_end
                 AND NOT EXISTS (
                     SELECT 1 FROM periods c
                     WHERE c.environment = e.environment AND c.original_transaction_id = e.original_transaction_id
                       AND c.period_start <= e.active_until AND c.active_until > e.active_until)) AS had_gap
    FROM at_start s
)
SELECT f.month, f.month_start, f.month_end, f.complete, f.environment,
       count(*) AS active_at_start,
       count(*) FILTER (WHERE f.gone) AS churned,
       round(count(*) FILTER (WHERE f.gone)::numeric / count(*), 4) AS churn_rate,
       count(*) FILTER (WHERE f.gone OR f.had_gap) AS lapsed,
       count(*) FILTER (WHERE NOT f.gone AND f.had_gap) AS resubscribed,
       round(count(*) FILTER (WHERE f.gone OR f.had_gap)::numeric / count(*), 4) AS gross_churn_rate
FROM flagged f
GROUP BY f.month, f.month_start, f.month_end, f.complete, f.environment;

COMMENT ON VIEW analytics.monthly_churn IS 'Per UTC month: paid subscriptions active at its start, churned (not active at its end: RevenueCat''s, net of resubscriptions), lapsed (gross) and rates.';

-- Trials: converted = the first paid period exists and was not refunded; abandoned = not converted and auto-renew
-- was off when the trial ended (or now, while it runs); pending = still running with auto-renew on.
CREATE OR REPLACE VIEW analytics.trials AS
WITH firsts AS (
    SELECT DISTINCT ON (p.environment, p.original_transaction_id) p.*
    FROM analytics.subscription_periods p
    ORDER BY p.environment, p.original_transaction_id, p.period_start, p.transaction_id
), trials AS (
    SELECT f.*, c.transaction_id AS c_transaction_id, c.period_start AS c_period_start, c.product_id AS c_product_id,
           c.price AS c_price, c.currency AS c_currency, c.revoked_at AS c_revoked_at,
           coalesce(r.auto_renew_status, 1) = 0 AS auto_renew_off
    FROM firsts f
    LEFT JOIN LATERAL (
        SELECT p.* FROM analytics.subscription_periods p
        WHERE p.environment = f.environment AND p.original_transaction_id = f.original_transaction_id
          AND p.period_start > f.period_start AND NOT p.is_trial AND p.price > 0
        ORDER BY p.period_start, p.transaction_id LIMIT 1
    ) c ON true
    LEFT JOIN LATERAL (
        SELECT ri.auto_renew_status FROM public.renewal_infos ri
        WHERE ri.environment = f.environment AND ri.original_transaction_id = f.original_transaction_id
          AND ri.signed_at <= least(f.period_end, now())
        ORDER BY ri.signed_at DESC, ri.fact_sha256 DESC LIMIT 1
    ) r ON true
    WHERE f.is_trial
)
SELECT t.environment, t.original_transaction_id, t.product_id,
       date_trunc('month', t.period_start AT TIME ZONE 'UTC')::date AS cohort_month,
       t.period_start AS trial_started_at, t.period_end AS trial_ends_at,
       t.c_transaction_id IS NOT NULL AND t.c_revoked_at IS NULL AS converted,
       t.c_transaction_id IS NULL AND t.active_until > now() AND NOT t.auto_renew_off AS pending,
       t.c_period_start AS converted_at, t.c_transaction_id AS converted_transaction_id, t.c_product_id AS converted_product_id,
       t.c_price AS converted_price, t.c_currency AS converted_currency,
       t.c_transaction_id IS NULL AND t.auto_renew_off AS abandoned,
       t.c_transaction_id IS NOT NULL AND t.c_revoked_at IS NOT NULL AS first_payment_refunded
FROM trials t;

COMMENT ON VIEW analytics.trials IS 'Subscriptions that started with a free trial: converted (first payment not refunded), pending (running, auto-renew on), abandoned (auto-renew off).';

CREATE OR REPLACE VIEW analytics.trial_conversion AS
SELECT environment, cohort_month, product_id,
       count(*) AS trials,
       count(*) FILTER (WHERE converted) AS converted,
       count(*) FILTER (WHERE pending) AS pending,
       round(count(*) FILTER (WHERE converted)::numeric / count(*), 4) AS conversion_rate,
       round(count(*) FILTER (WHERE converted)::numeric / nullif(count(*) FILTER (WHERE NOT pending), 0), 4) AS conversion_rate_of_ended,
       count(*) FILTER (WHERE abandoned) AS abandoned
FROM analytics.trials
GROUP BY environment, cohort_month, product_id;

COMMENT ON VIEW analytics.trial_conversion IS 'Per trial-start month and product: trials, conversions (first payment not refunded), pending, abandoned and rates.';

-- MRR at the end of each month, per product.
CREATE VIEW analytics.mrr_by_product AS
SELECT m.month, least(m.month_end, now()) AS as_of, m.complete, a.environment, a.product_id, a.currency,
       count(*) FILTER (WHERE a.is_paid) AS paid_subscriptions,
       count(*) FILTER (WHERE a.is_trial) AS trials,
       round(sum(a.monthly_revenue), 2) AS mrr
FROM analytics.months m
CROSS JOIN LATERAL analytics.active_subscriptions_at(least(m.month_end, now())) a
GROUP BY m.month, m.month_end, m.complete, a.environment, a.product_id, a.currency;

COMMENT ON VIEW analytics.mrr_by_product IS 'MRR per product and currency at the end of each UTC month (now for the current month), with the paid subscriptions and trials behind it.';

-- New subscriptions per month: original transactions whose first period began in it, and paid starts
-- (RevenueCat's new paid subscriptions: direct paid starts plus trial conversions, by the month of the payment).
CREATE VIEW analytics.new_subscriptions_by_month AS
WITH firsts AS (
    SELECT DISTINCT ON (p.environment, p.original_transaction_id) p.*
    FROM analytics.subscription_periods p
    ORDER BY p.environment, p.original_transaction_id, p.period_start, p.transaction_id
), starts AS (
    SELECT date_trunc('month', f.period_start AT TIME ZONE 'UTC')::date AS month, f.environment, f.product_id,
           'start' AS kind, f.is_trial, f.is_paid
    FROM firsts f
    UNION ALL
    SELECT date_trunc('month', t.converted_at AT TIME ZONE 'UTC')::date, t.environment, t.product_id,
           'conversion', false, true
    FROM analytics.trials t
    WHERE t.converted
)
SELECT s.month, s.environment, s.product_id,
       count(*) FILTER (WHERE s.kind = 'start') AS new_subscriptions,
       count(*) FILTER (WHERE s.kind = 'start' AND s.is_trial) AS new_trials,
       count(*) FILTER (WHERE s.kind = 'start' AND s.is_paid) AS new_paid_direct,
       count(*) FILTER (WHERE s.kind = 'conversion') AS trial_conversions,
       count(*) FILTER (WHERE s.is_paid) AS new_paid
FROM starts s
GROUP BY s.month, s.environment, s.product_id;

COMMENT ON VIEW analytics.new_subscriptions_by_month IS 'Per UTC month and product: subscriptions started (first period), trials among them, direct paid starts, trial conversions and new paid subscriptions.';

-- Refund rate per month: of the paid transactions purchased in the month (any product type), how many were
-- refunded by now (RevenueCat's refund rate, by transaction date); beside it the refunds made in the month.
CREATE VIEW analytics.refund_rate_by_month AS
WITH paid AS (
    SELECT t.environment, t.currency, t.purchased_at, t.revoked_at, t.revocation_type, t.price_amount,
           t.revoked_at IS NOT NULL AND t.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE' AS refunded
    FROM analytics.transactions t
    WHERE t.price > 0 AND NOT t.is_trial AND t.ownership IS DISTINCT FROM 'FAMILY_SHARED' AND t.purchased_at IS NOT NULL
), rows AS (
    SELECT date_trunc('month', p.purchased_at AT TIME ZONE 'UTC')::date AS month, p.environment, p.currency,
           1 AS purchased, CASE WHEN p.refunded THEN 1 ELSE 0 END AS purchased_refunded, 0 AS refunds, 0::numeric AS amount
    FROM paid p
    UNION ALL
    SELECT date_trunc('month', r.revoked_at AT TIME ZONE 'UTC')::date, r.environment, r.currency, 0, 0, 1, r.refunded_amount
    FROM analytics.refunds r
    WHERE r.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE'
)
SELECT r.month, r.environment, r.currency,
       sum(r.purchased) AS transactions,
       sum(r.purchased_refunded) AS refunded,
       round(sum(r.purchased_refunded)::numeric / nullif(sum(r.purchased), 0), 4) AS refund_rate,
       sum(r.refunds) AS refunds_in_month,
       sum(r.amount) AS refunded_amount_in_month
FROM rows r
GROUP BY r.month, r.environment, r.currency;

COMMENT ON VIEW analytics.refund_rate_by_month IS 'Per UTC month and currency: paid transactions purchased, how many were refunded (rate, by purchase month), refunds made in the month and their amount.';

COMMENT ON FUNCTION analytics.mrr_at(timestamptz) IS 'MRR per environment and currency at an instant (RevenueCat''s normalisation: weekly x 4; trials and family-shared count 0, a refunded period until its revocation).';

REVOKE ALL ON FUNCTION analytics.standard_billing_period(text) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storeledger_analyst') THEN
        PERFORM analytics.grant_read_access('storeledger_analyst');
    END IF;
END;
$$;
