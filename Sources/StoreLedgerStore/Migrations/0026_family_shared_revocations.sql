-- A Family Sharing member's transaction that is revoked (the purchaser was refunded, or stopped sharing) is not a
-- refund: the money goes back to the purchaser, whose own transaction is revoked as well and counted once. Apple
-- marks such revocations with revocationType FAMILY_REVOKE only since 2025; older payloads carry no revocationType,
-- and each member's copy was counted as a refund of the full price, so one refund counted 1 + N times. A revoked
-- FAMILY_SHARED transaction now refunds nothing and is no refund of its month, as FAMILY_REVOKE already was. The views
-- keep their columns (console_chart_refunds selects them all); their definitions are repeated in full, as CREATE OR
-- REPLACE VIEW needs.

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
       n.notification_uuid
FROM analytics.transactions t
LEFT JOIN LATERAL (
    SELECT x.notification_uuid FROM public.notifications x
    WHERE x.environment = t.environment AND x.transaction_id = t.transaction_id AND x.notification_type IN ('REFUND', 'REVOKE')
    ORDER BY x.signed_at DESC LIMIT 1
) n ON true
WHERE t.revoked_at IS NOT NULL;

COMMENT ON VIEW analytics.refunds IS 'Revoked transactions with their refunded amount (a Family Sharing revocation, FAMILY_REVOKE or any revoked FAMILY_SHARED transaction, refunds nothing; REFUND_PRORATED by revocationPercentage).';

CREATE OR REPLACE VIEW analytics.refund_rate_by_month AS
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
    WHERE r.revocation_type IS DISTINCT FROM 'FAMILY_REVOKE' AND r.ownership IS DISTINCT FROM 'FAMILY_SHARED'
)
SELECT r.month, r.environment, r.currency,
       sum(r.purchased) AS transactions,
       sum(r.purchased_refunded) AS refunded,
       round(sum(r.purchased_refunded)::numeric / nullif(sum(r.purchased), 0), 4) AS refund_rate,
       sum(r.refunds) AS refunds_in_month,
       sum(r.amount) AS refunded_amount_in_month
FROM rows r
GROUP BY r.month, r.environment, r.currency;

COMMENT ON VIEW analytics.refund_rate_by_month IS 'Per UTC month and currency: paid transactions purchased, how many were refunded (rate, by purchase month), refunds made in the month and their amount (Family Sharing revocations excluded).';
