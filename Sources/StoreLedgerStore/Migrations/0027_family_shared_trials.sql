-- A Family Sharing member's subscription that began with the purchaser's free trial is no trial of its own: the
-- purchaser took the trial and pays (or not) for it, and the member's copy (its own original transaction, ownership
-- FAMILY_SHARED) only mirrors it. Each member's copy counted as one more trial, its next period as one more
-- conversion, and trial_conversions (and new_paid, of which they are part) added the members' copies, while
-- new_paid_direct never counted a member's direct start. Trials now begin only in the purchaser's own first period, in
-- analytics.trials (and so trial_conversion) and in new_subscriptions_by_month's new_trials. The views keep their
-- columns; their definitions are repeated in full, as CREATE OR REPLACE VIEW needs.

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
    WHERE f.is_trial AND f.ownership IS DISTINCT FROM 'FAMILY_SHARED'
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

COMMENT ON VIEW analytics.trials IS 'Subscriptions that started with a free trial (the purchaser''s: a Family Sharing member''s copy is none): converted (first payment not refunded), pending (running, auto-renew on), abandoned (auto-renew off).';

CREATE OR REPLACE VIEW analytics.new_subscriptions_by_month AS
WITH firsts AS (
    SELECT DISTINCT ON (p.environment, p.original_transaction_id) p.*
    FROM analytics.subscription_periods p
    ORDER BY p.environment, p.original_transaction_id, p.period_start, p.transaction_id
), starts AS (
    SELECT date_trunc('month', f.period_start AT TIME ZONE 'UTC')::date AS month, f.environment, f.product_id,
           'start' AS kind, f.is_trial AND f.ownership IS DISTINCT FROM 'FAMILY_SHARED' AS is_trial, f.is_paid
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

COMMENT ON VIEW analytics.new_subscriptions_by_month IS 'Per UTC month and product: subscriptions started (first period; a Family Sharing member''s copy included), the purchasers'' trials among them, direct paid starts, trial conversions and new paid subscriptions.';
