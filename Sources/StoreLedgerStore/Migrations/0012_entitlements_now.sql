-- What "entitled now" means, defined once: `entitlements_at(t)` and the view over it, `entitlements_now`.
--
-- The read model (`subscriptions`, `purchases`) is a fold of signed facts and never reads a clock: its `status`
-- and `entitled` columns describe the last signed fact, so a period that lapsed without an EXPIRED notification,
-- or a billing grace period that ended without GRACE_PERIOD_EXPIRED, still reads `entitled`. `entitlements_at`
-- compares those rows with an instant and reads them through the product catalog; the app-facing API answers
-- from it (binding its own clock), the webhook outbox takes `entitled` from it, `entitlements_now` takes the
-- instant from the database clock. docs/app-api.md ("What premium means") states the rule in words.
--
-- The product catalog (PRODUCT_CATALOG) is published into `product_catalog` by the process serving the app-facing
-- API when it starts, so SQL and the routes read the same catalog.

CREATE TABLE product_catalog (
    product_id   text        PRIMARY KEY CHECK (product_id <> ''),
    entitlements text[],
    period       text        CHECK (period ~ '^P[1-9][0-9]*[DWMY]$'),
    display_name text,
    published_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE product_catalog IS 'The product catalog (PRODUCT_CATALOG) as last published by the app-facing API; empty = no catalog.';
COMMENT ON COLUMN product_catalog.entitlements IS 'What the product grants; NULL = the default for its type (premium; nothing for a consumable).';
COMMENT ON COLUMN product_catalog.period IS 'ISO 8601 duration (P1W, P1M, P1Y): how long a one-time product grants from its purchase; MRR period of a subscription.';

-- `purchased_at` plus an ISO 8601 period (P<n>D|W|M|Y), in UTC calendar arithmetic; NULL when either is NULL.
CREATE FUNCTION catalog_period_end(purchased_at timestamptz, period text)
RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (purchased_at AT TIME ZONE 'UTC'
        + CASE right(period, 1)
              WHEN 'D' THEN make_interval(days => substr(period, 2, length(period) - 2)::int)
              WHEN 'W' THEN make_interval(weeks => substr(period, 2, length(period) - 2)::int)
              WHEN 'M' THEN make_interval(months => substr(period, 2, length(period) - 2)::int)
              WHEN 'Y' THEN make_interval(years => substr(period, 2, length(period) - 2)::int)
          END) AT TIME ZONE 'UTC';

COMMENT ON FUNCTION catalog_period_end(timestamptz, text) IS 'purchased_at + an ISO 8601 period (P1W, P1M, P1Y) in UTC calendar arithmetic.';

-- One row per (purchase, entitlement it grants), or one row with entitlement NULL for a purchase that grants
-- nothing, evaluated at `at_time`. A plain SQL function (not SECURITY DEFINER, no SET clause) so the planner
-- inlines it and a caller's filter on the key reaches the tables' indexes.
--
-- The rule, in order:
-- 1. What a product grants: with a catalog (any row in product_catalog), a product it does not list grants
--    nothing (not_in_catalog); a listed product grants its `entitlements` ([] = nothing: no_entitlements); a
--    product without `entitlements` (or any product when there is no catalog) grants `premium`, except a
--    consumable, which is used up and grants nothing (consumable) unless the catalog lists entitlements for it.
-- 2. Whether it grants them at `at_time` (`state`):
--    auto-renewable subscription (row of `subscriptions`):
--      revoked, from its revocation date on                      -> revoked
--      active, before expires_at                                  -> active;       else expired
--      in a billing grace period, before its end                  -> grace_period; else grace_period_ended
--      billing_retry / expired                                    -> billing_retry / expired
--    one-time purchase (row of `purchases`):
--      revoked, from its revocation date on                      -> revoked
--      ends at Apple's expiresDate, else purchase + catalog period; before that -> active, after -> expired
--      no end: a non-renewing subscription (Apple sends no expiry) -> no_duration (grants nothing);
--              anything else                                      -> lifetime
-- 3. entitled_now = the state is active, grace_period or lifetime AND the product grants the entitlement.
--    reason = the state when it does not entitle, else the rule-1 reason when the product grants nothing, else
--    the state. status_now = the subscription vocabulary at that instant: active (lifetime too), grace_period,
--    billing_retry (grace_period_ended too), expired (no_duration too), revoked, or consumed (a consumable that
--    grants nothing).
-- The row's user: the owner in user_links, else the owner of its appAccountToken (as the app-facing API).
-- It evaluates the current state of each row at `at_time`: meant for now and instants around the current period's
-- boundaries; history (what was active last March) is analytics.active_subscriptions_at.
CREATE FUNCTION entitlements_at(at_time timestamptz)
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
    SELECT 'purchase', p.product_type, p.environment, coalesce(p.original_transaction_id, p.transaction_id), p.transaction_id,
           p.product_id, p.bundle_id,
           CASE WHEN p.entitled THEN 'active' ELSE 'revoked' END, p.purchased_at, p.expires_at, NULL::timestamptz,
           p.revoked_at, NULL::boolean, p.ownership, p.app_account_token
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

COMMENT ON FUNCTION entitlements_at(timestamptz) IS 'Every purchase x entitlement it grants, and whether it entitles at an instant (the one definition of "entitled now"; docs/app-api.md).';

CREATE VIEW entitlements_now AS
SELECT * FROM entitlements_at(now());

COMMENT ON VIEW entitlements_now IS 'entitlements_at(now()): who is entitled to what right now, by the database clock.';

-- Analysts read it through the analytics schema. Their role has no rights on public tables and a function body
-- is checked with the caller's rights, so analytics.entitlements_at runs with its owner's (SECURITY DEFINER with
-- a fixed search_path) and adds nothing to the rule: it returns public.entitlements_at as it is.
CREATE FUNCTION analytics.entitlements_at(at_time timestamptz)
RETURNS SETOF public.entitlements_now
LANGUAGE sql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM public.entitlements_at(at_time) $$;

COMMENT ON FUNCTION analytics.entitlements_at(timestamptz) IS 'public.entitlements_at for analysts: every purchase x entitlement and whether it entitles at an instant.';

CREATE VIEW analytics.entitlements_now AS
SELECT * FROM analytics.entitlements_at(now());

COMMENT ON VIEW analytics.entitlements_now IS 'Who is entitled to what right now (public.entitlements_at at the database clock).';

CREATE VIEW analytics.product_catalog AS
SELECT product_id, entitlements, period, display_name, published_at FROM public.product_catalog;

COMMENT ON VIEW analytics.product_catalog IS 'The product catalog as last published by the app-facing API (empty: no catalog).';

REVOKE ALL ON FUNCTION analytics.entitlements_at(timestamptz) FROM PUBLIC;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storeledger_analyst') THEN
        PERFORM analytics.grant_read_access('storeledger_analyst');
    END IF;
END;
$$;
