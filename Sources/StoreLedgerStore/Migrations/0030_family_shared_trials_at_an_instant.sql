-- The trials counted at an instant (analytics.mrr_at, mrr_by_month through it, mrr_by_product) are the purchasers'
-- own, as migration 0027 made the trials counted by cohort: a Family Sharing member's copy of a subscription in its
-- free trial mirrors the purchaser's trial and counted it twice. active_subscriptions counts it still (the member has
-- access), paid_subscriptions never did. The definitions are repeated in full, as CREATE OR REPLACE needs.

CREATE OR REPLACE FUNCTION analytics.mrr_at(at_time timestamptz)
RETURNS TABLE (environment text, currency text, active_subscriptions bigint, paid_subscriptions bigint,
               trials bigint, mrr numeric)
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT a.environment, a.currency, count(*), count(*) FILTER (WHERE a.is_paid),
           count(*) FILTER (WHERE a.is_trial AND a.ownership IS DISTINCT FROM 'FAMILY_SHARED'),
           round(sum(a.monthly_revenue), 2)
    FROM analytics.active_subscriptions_at(at_time) a
    GROUP BY a.environment, a.currency
    ORDER BY a.environment, a.currency;
END;

COMMENT ON FUNCTION analytics.mrr_at(timestamptz) IS 'MRR per environment and currency at an instant (RevenueCat''s normalisation: weekly x 4; trials and family-shared count 0, a refunded period until its revocation); trials are the purchasers'' own.';

CREATE OR REPLACE VIEW analytics.mrr_by_product AS
SELECT m.month, least(m.month_end, now()) AS as_of, m.complete, a.environment, a.product_id, a.currency,
       count(*) FILTER (WHERE a.is_paid) AS paid_subscriptions,
       count(*) FILTER (WHERE a.is_trial AND a.ownership IS DISTINCT FROM 'FAMILY_SHARED') AS trials,
       round(sum(a.monthly_revenue), 2) AS mrr
FROM analytics.months m
CROSS JOIN LATERAL analytics.active_subscriptions_at(least(m.month_end, now())) a
GROUP BY m.month, m.month_end, m.complete, a.environment, a.product_id, a.currency;

COMMENT ON VIEW analytics.mrr_by_product IS 'MRR per product and currency at the end of each UTC month (now for the current month), with the paid subscriptions and the purchasers'' trials behind it.';
