-- A trial converted when a later period was paid, but "paid" read `price > 0`, so a trial followed by a period without a
-- price (payloads before App Store Server Notifications 2.9, Xcode's test transactions) never converted: it was
-- abandoned in analytics.trial_conversion and new_subscriptions_by_month, while analytics.subscription_periods
-- (migration 0040) counts such a period as paid, in MRR and churn. A period without a price now converts a trial, as
-- one with a price above zero does. The view keeps its columns; its definition is repeated in full.

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
          AND p.period_start > f.period_start AND NOT p.is_trial AND (p.price > 0 OR p.price IS NULL)
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
       -- Neither converted nor pending: auto-renew off, a first payment that failed (billing retry never recovered) or
       -- was refunded. Every trial is then converted, pending or abandoned.
       NOT (t.c_transaction_id IS NOT NULL AND t.c_revoked_at IS NULL)
           AND NOT (t.c_transaction_id IS NULL AND t.active_until > now() AND NOT t.auto_renew_off) AS abandoned,
       t.c_transaction_id IS NOT NULL AND t.c_revoked_at IS NOT NULL AS first_payment_refunded
FROM trials t;

COMMENT ON VIEW analytics.trials IS 'Subscriptions that started with a free trial (the purchaser''s: a Family Sharing member''s copy is none): converted (first payment not refunded), pending (running, auto-renew on), abandoned (neither: auto-renew off, a first payment failed or refunded).';
