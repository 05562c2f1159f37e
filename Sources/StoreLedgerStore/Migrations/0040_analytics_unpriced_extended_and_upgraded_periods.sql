-- Three analytics fixes for data shaped as Apple sends it.
-- - A transaction without `price` (payloads before App Store Server Notifications 2.9, Xcode's test transactions) and
--   without `offerDiscountType` made is_trial NULL, so its period was neither paid nor unpaid: out of churn's starting
--   set, of paid_subscriptions and of trials. Without a price, an introductory offer (offerType 1) of no known kind
--   is taken for a free trial, by far the commonest introductory offer; any other period is paid.
-- - A renewal-date extension (RENEWAL_EXTENDED: up to 90 days, also for every subscriber of a product at once)
--   re-signs the period's transaction with a later expiry, and the subscription's inferred billing period (without a
--   catalog `period`) became the extended length: MRR divided by 2 to 4 for monthly products, 16 for weekly ones.
--   Billing periods are now measured from each transaction's expiry as first signed (analytics.transactions'
--   appended `original_expires_at`: the earliest expiry of its versions); period_end is still the extended one.
-- - An upgrade's notification carries only the new transaction; the old period stays unrevised unless an app or
--   Get Transaction History fetches it re-signed with isUpgraded. Until then it counted as active under its old
--   product until its own expiry, beside the new one (per-product MRR and activity counted the subscription twice). A
--   period now ends when the subscription's next period begins, if that is before its expiry.
-- The views keep their columns; their definitions are repeated in full, as CREATE OR REPLACE VIEW needs.

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
        OR coalesce(t.offer_type = 1 AND (t.price = 0 OR (t.price IS NULL AND t.payload ->> 'offerDiscountType' IS NULL)), false)
                                                                       AS is_trial,
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
         ELSE coalesce(t.original_transaction_id, t.transaction_id) END AS sale_id,
    min(t.expires_at) OVER (PARTITION BY t.environment, t.transaction_id) AS original_expires_at
FROM public.transactions t
ORDER BY t.environment, t.transaction_id, t.signed_at DESC NULLS LAST, t.fact_sha256 DESC;

COMMENT ON COLUMN analytics.transactions.original_expires_at IS 'The earliest expiry any version of the transaction was signed with: its period as first signed, before a renewal-date extension.';

CREATE OR REPLACE VIEW analytics.subscription_periods AS
WITH periods AS (
    SELECT t.*,
           -- Its length as first signed: a renewal-date extension (RENEWAL_EXTENDED, up to 90 days, re-signs the
           -- transaction with a later expiry) is no longer billing period.
           analytics.billing_period(t.purchased_at, t.original_expires_at, t.environment) AS own_period,
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
           extract(epoch FROM original_expires_at - purchased_at) AS seconds
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
    -- replaced it, whichever is first: a period re-signed as upgraded, or one whose subscription's next period began
    -- before it ended (Apple's upgrade notification carries only the new transaction, and the old one is re-signed
    -- with isUpgraded only where an app or Get Transaction History fetches it).
    least(greatest(p.expires_at, g.grace_period_expires_at),
          p.revoked_at,
          CASE WHEN p.is_upgraded OR p.next_period_start < p.expires_at THEN p.next_period_start END) AS active_until,
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
