-- A one-time purchase restored on another device is a transaction of its own (a new transaction id, the purchase's
-- original one: migration 0036), which an app may post. refund_rate_by_month counted each such copy as another sale,
-- and a refund naming more than one copy as more than one refund. Every transaction now names the sale it belongs to
-- (`sale_id`: a subscription period is a sale of its own; a one-time purchase's copies are its original purchase), and
-- the refund views count sales: a purchase is sold once, from its earliest copy, and refunded once, by the copy that
-- carries the refund (a copy revoked with the purchaser's refund as FAMILY_REVOKE refunds nothing). The views'
-- existing columns stay as they were (console_chart_refunds selects them all); their definitions are repeated in full,
-- as CREATE OR REPLACE VIEW needs.

CREATE OR REPLACE VIEW analytics.transactions AS
SELECT DISTINCT ON (t.environment, t.transaction_id)
    t.environment,
    t.transaction_id,
    t.original_transaction_id,
    t.web_order_line_item_id,
    t.bundle_id,
    t.product_id,
    t.product_type,
    t.subscription_group,
    t.payload ->> 'transactionReason'                                  AS transaction_reason,
    t.purchased_at,
    t.original_purchased_at,
    t.expires_at,
    coalesce((t.payload ->> 'quantity')::integer, 1)                   AS quantity,
    t.price,
    t.currency,
    round(t.price::numeric / 1000, 3)                                            AS price_amount,
    t.offer_type,
    t.payload ->> 'offerDiscountType'                                  AS offer_discount_type,
    t.offer_id,
    t.payload ->> 'offerPeriod'                                        AS offer_period,
    coalesce(t.payload ->> 'offerDiscountType' = 'FREE_TRIAL', false)
        OR (t.offer_type = 1 AND t.price = 0)                          AS is_trial,
    t.ownership,
    t.payload ->> 'storefront'                                         AS storefront,
    t.app_account_token,
    coalesce((t.payload ->> 'isUpgraded')::boolean, false)             AS is_upgraded,
    t.revoked_at,
    t.revocation_reason,
    t.payload ->> 'revocationType'                                     AS revocation_type,
    (t.payload ->> 'revocationPercentage')::numeric::integer           AS revocation_percentage,
    t.signed_at,
    t.first_event_id,
    CASE WHEN t.product_type = 'Auto-Renewable Subscription' OR (t.product_type IS NULL AND t.subscription_group IS NOT NULL)
         THEN t.transaction_id
         ELSE coalesce(t.original_transaction_id, t.transaction_id) END AS sale_id
FROM public.transactions t
ORDER BY t.environment, t.transaction_id, t.signed_at DESC NULLS LAST, t.fact_sha256 DESC;

COMMENT ON COLUMN analytics.transactions.sale_id IS 'The sale this transaction is part of: its own transaction id for a subscription period; the original transaction id for a one-time purchase (a copy restored on another device is the same sale).';

CREATE OR REPLACE VIEW analytics.refunds AS
SELECT t.environment, t.transaction_id, t.original_transaction_id, t.bundle_id, t.product_id, t.product_type,
       t.purchased_at, t.revoked_at, t.revoked_at - t.purchased_at AS time_to_refund,
       t.revocation_reason,
       CASE t.revocation_reason WHEN 0 THEN 'other' WHEN 1 THEN 'app_issue' END AS revocation_reason_name,
       t.revocation_type, t.revocation_percentage, t.is_trial, t.ownership,
       t.price, t.currency, t.price_amount,
       CASE WHEN t.revocation_type = 'FAMILY_REVOKE' OR t.ownership = 'FAMILY_SHARED' THEN 0
            WHEN t.revocation_type = 'REFUND_PRORATED' AND t.revocation_percentage IS NOT NULL
                 THEN round(t.price_amount * t.revocation_percentage / 100000, 3)
            ELSE t.price_amount END AS refunded_amount,
       n.notification_uuid,
       t.sale_id
FROM (
    -- One row per sale: of a purchase's revoked copies, the one that refunds (not a Family Sharing revocation), the
    -- earliest, the purchase itself before a restored copy.
    SELECT DISTINCT ON (r.environment, r.sale_id) r.*
    FROM analytics.transactions r
    WHERE r.revoked_at IS NOT NULL
    ORDER BY r.environment, r.sale_id,
             coalesce(r.revocation_type = 'FAMILY_REVOKE', false) OR coalesce(r.ownership = 'FAMILY_SHARED', false),
             r.revoked_at, r.transaction_id = r.original_transaction_id DESC NULLS LAST, r.transaction_id
) t
LEFT JOIN LATERAL (
    SELECT x.notification_uuid FROM public.notifications x
    WHERE x.environment = t.environment AND x.transaction_id = t.transaction_id AND x.notification_type IN ('REFUND', 'REVOKE')
    ORDER BY x.signed_at DESC LIMIT 1
) n ON true;

COMMENT ON VIEW analytics.refunds IS 'One row per refunded sale: its revoked transaction (of a one-time purchase''s restored copies, the one that carries the refund) with its refunded amount (a Family Sharing revocation, FAMILY_REVOKE or any revoked FAMILY_SHARED transaction, refunds nothing; REFUND_PRORATED by revocationPercentage).';

CREATE OR REPLACE VIEW analytics.refund_rate_by_month AS
WITH refunds AS MATERIALIZED (
    SELECT r.environment, r.sale_id, r.revoked_at, r.currency, r.refunded_amount
    FROM analytics.refunds r
    WHERE r.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE' AND r.ownership IS DISTINCT FROM 'FAMILY_SHARED'
), paid AS (
    -- One row per sale, from its earliest copy.
    SELECT DISTINCT ON (t.environment, t.sale_id) t.environment, t.currency, t.purchased_at, t.sale_id
    FROM analytics.transactions t
    WHERE t.price > 0 AND NOT t.is_trial AND t.ownership IS DISTINCT FROM 'FAMILY_SHARED' AND t.purchased_at IS NOT NULL
    ORDER BY t.environment, t.sale_id, t.purchased_at, t.transaction_id
), rows AS (
    -- A sale is refunded when it has a refund (a join, which the planner can hash: a correlated EXISTS over the
    -- refunds view would scan the transactions once per sale).
    SELECT date_trunc('month', p.purchased_at AT TIME ZONE 'UTC')::date AS month, p.environment, p.currency,
           1 AS purchased, CASE WHEN f.sale_id IS NOT NULL THEN 1 ELSE 0 END AS purchased_refunded, 0 AS refunds, 0::numeric AS amount
    FROM paid p
    LEFT JOIN refunds f ON f.environment = p.environment AND f.sale_id = p.sale_id
    UNION ALL
    SELECT date_trunc('month', f.revoked_at AT TIME ZONE 'UTC')::date, f.environment, f.currency, 0, 0, 1, f.refunded_amount
    FROM refunds f
)
SELECT r.month, r.environment, r.currency,
       sum(r.purchased) AS transactions,
       sum(r.purchased_refunded) AS refunded,
       round(sum(r.purchased_refunded)::numeric / nullif(sum(r.purchased), 0), 4) AS refund_rate,
       sum(r.refunds) AS refunds_in_month,
       sum(r.amount) AS refunded_amount_in_month
FROM rows r
GROUP BY r.month, r.environment, r.currency;

COMMENT ON COLUMN analytics.refunds.sale_id IS 'The sale refunded (analytics.transactions.sale_id).';

COMMENT ON VIEW analytics.refund_rate_by_month IS 'Per UTC month and currency: paid sales (a subscription period, or a one-time purchase with its restored copies) purchased, how many were refunded (rate, by purchase month), refunds made in the month and their amount (Family Sharing revocations excluded).';
