-- A subscription whose renewal failed (DID_FAIL_TO_RENEW without a grace period, Apple's status 3: billing retry)
-- stopped entitling at once, even when Apple said so before the paid period ended: Apple begins charging for the
-- renewal up to a day before the expiry, and a failure then left the customer without the last hours (or, for a
-- yearly plan, whatever was left) of a period they had paid for. A billing retry now entitles until the period's
-- expiry, as a grace period does; after it, not. Only entitlements_at changes (the stored row still says what the
-- last signed fact said).
CREATE OR REPLACE FUNCTION entitlements_at(at_time timestamptz)
RETURNS TABLE (
    user_id                 text,
    entitlement             text,
    entitled_now            boolean,
    reason                  text,
    status_now              text,
    kind                    text,
    product_type            text,
    environment             text,
    original_transaction_id text,
    transaction_id          text,
    product_id              text,
    bundle_id               text,
    status                  text,
    purchased_at            timestamptz,
    expires_at              timestamptz,
    grace_period_expires_at timestamptz,
    ends_at                 timestamptz,
    revoked_at              timestamptz,
    auto_renew              boolean,
    ownership               text,
    app_account_token       text,
    in_catalog              boolean
)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
SELECT coalesce(l.user_id, tok.user_id),
       g.entitlement,
       g.entitlement IS NOT NULL AND s.state IN ('active', 'grace_period', 'lifetime'),
       CASE WHEN s.state NOT IN ('active', 'grace_period', 'lifetime') THEN s.state
            WHEN cardinality(x.granted) = 0 THEN x.why_nothing
            ELSE s.state END,
       CASE WHEN s.state = 'lifetime' AND cardinality(x.granted) = 0 AND r.product_type = 'Consumable' THEN 'consumed'
            WHEN s.state = 'lifetime' THEN 'active'
            WHEN s.state = 'grace_period_ended' THEN 'billing_retry'
            WHEN s.state = 'no_duration' THEN 'expired'
            ELSE s.state END,
       r.kind, r.product_type, r.environment, r.original_transaction_id, r.transaction_id, r.product_id, r.bundle_id,
       r.status, r.purchased_at, r.expires_at, r.grace_period_expires_at,
       s.ends_at, r.revoked_at, r.auto_renew, r.ownership, r.app_account_token,
       c.product_id IS NOT NULL
FROM (
    SELECT 'subscription'::text AS kind, 'Auto-Renewable Subscription'::text AS product_type, sub.environment,
           sub.original_transaction_id, sub.latest_transaction_id AS transaction_id, sub.product_id, sub.bundle_id,
           sub.status, sub.purchased_at, sub.expires_at, sub.grace_period_expires_at, sub.revoked_at, sub.auto_renew,
           sub.ownership, sub.app_account_token
    FROM public.subscriptions sub
    UNION ALL
    -- A purchase's rows (a restore on another device has a transaction id of its own and the purchase's original one)
    -- stand or fall together: revoked when any of them is, from the earliest such revocation (an undated one: always).
    -- Scalar subqueries, not a join, so that this branch stays a plain scan of purchases that a caller's filter on
    -- (environment, original_transaction_id) reaches by index (purchases_owner_key_idx), as in 0012.
    SELECT 'purchase', p.product_type, p.environment, coalesce(p.original_transaction_id, p.transaction_id), p.transaction_id,
           p.product_id, p.bundle_id,
           CASE WHEN p.entitled AND NOT EXISTS (
                    SELECT 1 FROM public.purchases q
                    WHERE q.environment = p.environment AND NOT q.entitled
                      AND coalesce(q.original_transaction_id, q.transaction_id) = coalesce(p.original_transaction_id, p.transaction_id))
                THEN 'active' ELSE 'revoked' END,
           p.purchased_at, p.expires_at, NULL::timestamptz,
           (SELECT CASE WHEN bool_or(q.revoked_at IS NULL) THEN NULL ELSE min(q.revoked_at) END
            FROM public.purchases q
            WHERE q.environment = p.environment AND NOT q.entitled
              AND coalesce(q.original_transaction_id, q.transaction_id) = coalesce(p.original_transaction_id, p.transaction_id)),
           NULL::boolean, p.ownership, p.app_account_token
    FROM public.purchases p
) r
LEFT JOIN public.product_catalog c ON c.product_id = r.product_id
LEFT JOIN public.user_links l ON l.environment = r.environment AND l.original_transaction_id = r.original_transaction_id
LEFT JOIN public.app_account_tokens tok ON tok.app_account_token = lower(r.app_account_token)
CROSS JOIN LATERAL (
    SELECT CASE WHEN c.product_id IS NULL AND EXISTS (SELECT 1 FROM public.product_catalog) THEN '{}'::text[]
                WHEN c.entitlements IS NOT NULL THEN c.entitlements
                WHEN r.product_type = 'Consumable' THEN '{}'::text[]
                ELSE ARRAY['premium'] END AS granted,
           CASE WHEN c.product_id IS NULL AND EXISTS (SELECT 1 FROM public.product_catalog) THEN 'not_in_catalog'
                WHEN c.entitlements IS NOT NULL THEN 'no_entitlements'
                ELSE 'consumable' END AS why_nothing,
           CASE WHEN r.kind = 'purchase' THEN coalesce(r.expires_at, public.catalog_period_end(r.purchased_at, c.period)) END
               AS one_time_end
) x
CROSS JOIN LATERAL (
    SELECT CASE
               WHEN r.status = 'revoked' AND (r.revoked_at IS NULL OR r.revoked_at <= at_time) THEN 'revoked'
               WHEN r.kind = 'purchase' THEN
                   CASE WHEN x.one_time_end IS NOT NULL THEN CASE WHEN at_time < x.one_time_end THEN 'active' ELSE 'expired' END
                        WHEN r.product_type = 'Non-Renewing Subscription' THEN 'no_duration'
                        ELSE 'lifetime' END
               WHEN r.status IN ('active', 'revoked') THEN
                   CASE WHEN r.expires_at IS NULL OR at_time < r.expires_at THEN 'active' ELSE 'expired' END
               WHEN r.status = 'grace_period' THEN
                   CASE WHEN coalesce(r.grace_period_expires_at, r.expires_at) IS NULL
                             OR at_time < coalesce(r.grace_period_expires_at, r.expires_at)
                        THEN 'grace_period' ELSE 'grace_period_ended' END
               -- A renewal that failed before the paid period ended (Apple starts charging up to a day ahead) does
               -- not end that period: it was paid for.
               WHEN r.status = 'billing_retry' AND r.expires_at IS NOT NULL AND at_time < r.expires_at THEN 'active'
               ELSE r.status
           END AS state,
           CASE
               WHEN r.kind = 'purchase' THEN least(x.one_time_end, r.revoked_at)
               WHEN r.status = 'revoked' THEN least(r.revoked_at, r.expires_at)
               WHEN r.status = 'grace_period' THEN coalesce(r.grace_period_expires_at, r.expires_at)
               ELSE r.expires_at
           END AS ends_at
) s
CROSS JOIN LATERAL unnest(CASE WHEN cardinality(x.granted) = 0 THEN ARRAY[NULL::text] ELSE x.granted END) AS g(entitlement)
$$;
