-- Analyst views: schema `analytics`, read by the NOLOGIN role storeledger_analyst, which can write nothing.
-- Documented in docs/analytics.md (definitions of MRR, churn and trial conversion, example queries).
--
-- Everything here reads the verified facts (notifications, transactions, renewal_infos) and the read model
-- (subscriptions, purchases) of 0003; nothing reads `events` (raw, unverified bodies). Views run with their
-- owner's rights, so the analyst needs SELECT on the views only, never on the tables. The SQL functions are
-- SECURITY INVOKER and read only `analytics` views, so they too need nothing more than what the analyst has.
--
-- Month boundaries are UTC. Amounts: `price` columns are Apple's milliunits (10990 = 10.99); `*_amount`,
-- `monthly_revenue` and `mrr` are in currency units. Currencies are never added together.

CREATE SCHEMA analytics;

COMMENT ON SCHEMA analytics IS 'Read-only analyst views over the verified facts and the read model (docs/analytics.md).';

-- The standard App Store auto-renewable durations, with the factor that turns one period's price into a
-- monthly amount (RevenueCat's normalisation: weekly x 52/12, 2/3/6 months / 2/3/6, yearly / 12), and the
-- accelerated durations the sandbox uses by default.
CREATE VIEW analytics.billing_periods (billing_period, description, nominal_days, sandbox_minutes, per_month_numerator, per_month_denominator) AS
VALUES ('P1W', '1 week',    7.0,      3, 52, 12),
       ('P1M', '1 month',   30.436875, 5,  1,  1),
       ('P2M', '2 months',  60.87375, 10,  1,  2),
       ('P3M', '3 months',  91.310625, 15, 1,  3),
       ('P6M', '6 months', 182.62125, 30,  1,  6),
       ('P1Y', '1 year',   365.2425,  60,  1, 12);

COMMENT ON VIEW analytics.billing_periods IS 'Standard subscription durations and the factor that normalises a period''s price to a month.';

-- The standard duration nearest to [period_start, period_end) (nearest by ratio, so 25-35 days is P1M). Apple's
-- transaction has no period field. Sandbox periods shorter than 2 hours are matched against the sandbox's
-- accelerated durations (1 month = 5 minutes).
CREATE FUNCTION analytics.billing_period(period_start timestamptz, period_end timestamptz, environment text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (
    SELECT p.billing_period
    FROM (VALUES ('P1W', 7.0::float8, 3), ('P1M', 30.436875, 5), ('P2M', 60.87375, 10),
                 ('P3M', 91.310625, 15), ('P6M', 182.62125, 30), ('P1Y', 365.2425, 60)) AS p(billing_period, days, sandbox_minutes)
    WHERE period_end > period_start
    ORDER BY abs(ln(
        extract(epoch FROM period_end - period_start)::float8
        / CASE WHEN environment = 'Sandbox' AND period_end - period_start < interval '2 hours'
               THEN p.sandbox_minutes * 60.0
               ELSE p.days * 86400.0 END))
    LIMIT 1
);

COMMENT ON FUNCTION analytics.billing_period(timestamptz, timestamptz, text) IS 'Nearest standard duration (P1W, P1M, P2M, P3M, P6M, P1Y) of a subscription period.';

-- One row per verified notification (by notificationUUID; Apple's retries are counted in delivery_count), with
-- the nested transaction's and renewal info's fields as typed columns.
CREATE VIEW analytics.notifications AS
SELECT
    n.notification_uuid,
    n.notification_type,
    n.subtype,
    n.signed_at,
    n.environment,
    n.bundle_id,
    n.app_apple_id,
    n.payload ->> 'version'                                            AS version,
    n.status,
    CASE n.status WHEN 1 THEN 'active' WHEN 2 THEN 'expired' WHEN 3 THEN 'billing_retry'
                  WHEN 4 THEN 'grace_period' WHEN 5 THEN 'revoked' END  AS status_name,
    n.original_transaction_id,
    n.transaction_id,
    n.product_id,
    n.transaction_payload ->> 'type'                                   AS product_type,
    n.transaction_payload ->> 'transactionReason'                      AS transaction_reason,
    n.transaction_payload ->> 'webOrderLineItemId'                     AS web_order_line_item_id,
    to_timestamp((n.transaction_payload ->> 'purchaseDate')::float8 / 1000)         AS purchased_at,
    to_timestamp((n.transaction_payload ->> 'originalPurchaseDate')::float8 / 1000) AS original_purchased_at,
    to_timestamp((n.transaction_payload ->> 'expiresDate')::float8 / 1000)          AS expires_at,
    (n.transaction_payload ->> 'price')::numeric::bigint               AS price,
    n.transaction_payload ->> 'currency'                               AS currency,
    round((n.transaction_payload ->> 'price')::numeric / 1000, 3)               AS price_amount,
    (n.transaction_payload ->> 'offerType')::integer                   AS offer_type,
    n.transaction_payload ->> 'offerDiscountType'                      AS offer_discount_type,
    n.transaction_payload ->> 'offerIdentifier'                        AS offer_id,
    n.transaction_payload ->> 'inAppOwnershipType'                     AS ownership,
    n.transaction_payload ->> 'storefront'                             AS storefront,
    nullif(n.transaction_payload ->> 'appAccountToken', '')            AS app_account_token,
    to_timestamp((n.transaction_payload ->> 'revocationDate')::float8 / 1000)       AS revoked_at,
    (n.transaction_payload ->> 'revocationReason')::integer            AS revocation_reason,
    n.transaction_payload ->> 'revocationType'                         AS revocation_type,
    (n.renewal_payload ->> 'autoRenewStatus')::integer = 1             AS auto_renew,
    n.renewal_payload ->> 'autoRenewProductId'                         AS auto_renew_product_id,
    (n.renewal_payload ->> 'expirationIntent')::integer                AS expiration_intent,
    (n.renewal_payload ->> 'isInBillingRetryPeriod')::boolean          AS is_in_billing_retry,
    to_timestamp((n.renewal_payload ->> 'gracePeriodExpiresDate')::float8 / 1000)   AS grace_period_expires_at,
    to_timestamp((n.renewal_payload ->> 'renewalDate')::float8 / 1000) AS renewal_at,
    (n.renewal_payload ->> 'renewalPrice')::numeric::bigint            AS renewal_price,
    n.transaction_payload IS NOT NULL                                  AS has_transaction,
    n.renewal_payload IS NOT NULL                                      AS has_renewal_info,
    n.delivery_count,
    n.first_event_id,
    n.last_event_id,
    n.recorded_at
FROM public.notifications n;

COMMENT ON VIEW analytics.notifications IS 'One row per verified App Store Server Notification (notificationUUID), nested signed data as typed columns.';

-- One row per transaction id: its latest-signed version (a refund or an extension re-signs a transaction), every
-- product type.
CREATE VIEW analytics.transactions AS
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
    t.first_event_id
FROM public.transactions t
ORDER BY t.environment, t.transaction_id, t.signed_at DESC NULLS LAST, t.fact_sha256 DESC;

COMMENT ON VIEW analytics.transactions IS 'One row per (environment, transaction id): its latest-signed version, typed.';

-- One row per paid-or-free period of an auto-renewable subscription (one per transaction id), with its normalised
-- duration, its monthly revenue and the instant it stopped giving access (active_until).
CREATE VIEW analytics.subscription_periods AS
WITH periods AS (
    SELECT t.*,
           analytics.billing_period(t.purchased_at, t.expires_at, t.environment) AS billing_period,
           lead(t.purchased_at) OVER w AS next_period_start,
           row_number() OVER w AS period_number
    FROM analytics.transactions t
    WHERE (t.product_type = 'Auto-Renewable Subscription' OR (t.product_type IS NULL AND t.subscription_group IS NOT NULL))
      AND t.purchased_at IS NOT NULL
      AND t.expires_at IS NOT NULL
    WINDOW w AS (PARTITION BY t.environment, t.original_transaction_id ORDER BY t.purchased_at, t.transaction_id)
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
    CASE WHEN p.is_trial OR p.ownership = 'FAMILY_SHARED' OR p.revoked_at IS NOT NULL OR p.price IS NULL THEN 0
         ELSE p.price_amount * b.per_month_numerator / b.per_month_denominator
    END                                                                AS monthly_revenue,
    p.app_account_token,
    p.storefront
FROM periods p
LEFT JOIN analytics.billing_periods b ON b.billing_period = p.billing_period
LEFT JOIN LATERAL (
    -- A billing grace period that follows this period (Apple's are 3 to 28 days long).
    SELECT max(r.grace_period_expires_at) AS grace_period_expires_at
    FROM public.renewal_infos r
    WHERE r.environment = p.environment
      AND r.original_transaction_id = p.original_transaction_id
      AND r.grace_period_expires_at > p.expires_at
      AND r.grace_period_expires_at <= p.expires_at + interval '28 days'
) g ON true;

COMMENT ON VIEW analytics.subscription_periods IS 'One row per auto-renewable transaction (a billing period), with normalised duration, monthly revenue and active_until.';
COMMENT ON COLUMN analytics.subscription_periods.monthly_revenue IS 'Price normalised per month in currency units (RevenueCat''s MRR rule); 0 for free trials, family-shared, revoked and unpriced periods.';

-- The read model, as analysts see it (amounts in currency units beside Apple's milliunits).
CREATE VIEW analytics.subscriptions AS
SELECT s.environment, s.original_transaction_id, s.bundle_id, s.product_id, s.subscription_group, s.status, s.entitled,
       s.latest_transaction_id, s.purchased_at, s.original_purchased_at, s.expires_at, s.grace_period_expires_at,
       s.auto_renew, s.auto_renew_product_id, s.expiration_intent, s.price_increase_status, s.offer_type, s.offer_id,
       s.ownership, s.app_account_token, s.revoked_at, s.revocation_reason, s.revocation_type,
       s.price, s.currency, round(s.price::numeric / 1000, 3) AS price_amount, s.storefront, s.last_signed_at, s.updated_at
FROM public.subscriptions s;

COMMENT ON VIEW analytics.subscriptions IS 'Current state of each auto-renewable subscription (the read model).';

CREATE VIEW analytics.purchases AS
SELECT p.environment, p.transaction_id, p.original_transaction_id, p.bundle_id, p.product_id, p.product_type,
       p.purchased_at, p.expires_at, p.quantity, p.price, p.currency, round(p.price::numeric / 1000, 3) AS price_amount,
       p.ownership, p.app_account_token, p.storefront, p.revoked_at, p.revocation_reason, p.revocation_type,
       p.entitled, p.last_signed_at, p.updated_at
FROM public.purchases p;

COMMENT ON VIEW analytics.purchases IS 'Consumables, non-consumables and non-renewing subscriptions (the read model).';

-- Everything that happened to one subscription, in order: its periods, its revocations and every notification
-- about it.
CREATE VIEW analytics.subscription_timeline AS
SELECT e.environment, e.original_transaction_id,
       row_number() OVER (PARTITION BY e.environment, e.original_transaction_id
                          ORDER BY e.occurred_at, e.kind_rank, e.transaction_id, e.notification_uuid) AS seq,
       e.occurred_at, e.kind, e.event, e.subtype, e.transaction_id, e.product_id, e.period_start, e.period_end,
       e.billing_period, e.is_trial, e.price, e.currency, e.status, e.notification_uuid
FROM (
    SELECT p.environment, p.original_transaction_id, p.period_start AS occurred_at, 'period' AS kind, 0 AS kind_rank,
           coalesce(p.transaction_reason, CASE WHEN p.period_number = 1 THEN 'PURCHASE' ELSE 'RENEWAL' END) AS event,
           NULL::text AS subtype, p.transaction_id, p.product_id, p.period_start, p.period_end, p.billing_period,
           p.is_trial, p.price, p.currency, NULL::integer AS status, NULL::text AS notification_uuid
    FROM analytics.subscription_periods p
    UNION ALL
    SELECT p.environment, p.original_transaction_id, p.revoked_at, 'revocation', 1,
           coalesce(p.revocation_type, 'REVOKED'), NULL, p.transaction_id, p.product_id, p.period_start, p.period_end,
           p.billing_period, p.is_trial, p.price, p.currency, NULL, NULL
    FROM analytics.subscription_periods p
    WHERE p.revoked_at IS NOT NULL
    UNION ALL
    SELECT n.environment, n.original_transaction_id, n.signed_at, 'notification', 2,
           n.notification_type, n.subtype, n.transaction_id, n.product_id, NULL, NULL,
           NULL, NULL, NULL, NULL, n.status, n.notification_uuid
    FROM public.notifications n
    WHERE n.original_transaction_id IS NOT NULL
) e;

COMMENT ON VIEW analytics.subscription_timeline IS 'Per original transaction: periods, revocations and notifications in time order (seq).';

-- The subscriptions giving access at an instant: one row per subscription (its period covering that instant).
CREATE FUNCTION analytics.active_subscriptions_at(at_time timestamptz)
RETURNS SETOF analytics.subscription_periods
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT DISTINCT ON (p.environment, p.original_transaction_id) p.*
    FROM analytics.subscription_periods p
    WHERE p.period_start <= at_time AND p.active_until > at_time
    ORDER BY p.environment, p.original_transaction_id, p.period_start DESC, p.transaction_id DESC;
END;

COMMENT ON FUNCTION analytics.active_subscriptions_at(timestamptz) IS 'Subscriptions giving access at an instant (free trials and family-shared included; see is_paid).';

-- MRR at an instant, per environment and currency.
CREATE FUNCTION analytics.mrr_at(at_time timestamptz)
RETURNS TABLE (environment text, currency text, active_subscriptions bigint, paid_subscriptions bigint,
               trials bigint, mrr numeric)
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT a.environment, a.currency, count(*), count(*) FILTER (WHERE a.is_paid), count(*) FILTER (WHERE a.is_trial),
           round(sum(a.monthly_revenue), 2)
    FROM analytics.active_subscriptions_at(at_time) a
    GROUP BY a.environment, a.currency
    ORDER BY a.environment, a.currency;
END;

COMMENT ON FUNCTION analytics.mrr_at(timestamptz) IS 'MRR per environment and currency at an instant (RevenueCat''s normalisation; trials, family-shared and revoked count 0).';

-- Calendar months (UTC) from the first subscription period to the current month.
CREATE VIEW analytics.months AS
SELECT m::date AS month,
       m AT TIME ZONE 'UTC' AS month_start,
       (m + interval '1 month') AT TIME ZONE 'UTC' AS month_end,
       (m + interval '1 month') AT TIME ZONE 'UTC' <= now() AS complete
FROM generate_series(
    (SELECT date_trunc('month', min(t.purchased_at) AT TIME ZONE 'UTC') FROM public.transactions t WHERE t.expires_at IS NOT NULL),
    date_trunc('month', now() AT TIME ZONE 'UTC'),
    interval '1 month') AS m;

COMMENT ON VIEW analytics.months IS 'UTC calendar months from the first subscription period to now.';

-- MRR at the end of each month (now, for the current month), per environment and currency.
CREATE VIEW analytics.mrr_by_month AS
SELECT m.month, least(m.month_end, now()) AS as_of, m.complete, r.environment, r.currency,
       r.active_subscriptions, r.paid_subscriptions, r.trials, r.mrr
FROM analytics.months m
CROSS JOIN LATERAL analytics.mrr_at(least(m.month_end, now())) r;

COMMENT ON VIEW analytics.mrr_by_month IS 'MRR per currency at the end of each UTC month (now for the current month).';

-- Paid subscriptions active at a month's start that are not active (paid or not) at its end.
CREATE VIEW analytics.monthly_churn AS
WITH periods AS MATERIALIZED (
    SELECT environment, original_transaction_id, period_start, active_until, is_paid FROM analytics.subscription_periods
), at_start AS (
    SELECT DISTINCT m.month, m.month_start, least(m.month_end, now()) AS month_end, m.complete, p.environment, p.original_transaction_id
    FROM analytics.months m
    JOIN periods p ON p.is_paid AND p.period_start <= m.month_start AND p.active_until > m.month_start
)
SELECT s.month, s.month_start, s.month_end, s.complete, s.environment,
       count(*) AS active_at_start,
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM periods e
           WHERE e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
             AND e.period_start <= s.month_end AND e.active_until > s.month_end)) AS churned,
       round(count(*) FILTER (WHERE NOT EXISTS (
           SELECT 1 FROM periods e
           WHERE e.environment = s.environment AND e.original_transaction_id = s.original_transaction_id
             AND e.period_start <= s.month_end AND e.active_until > s.month_end))::numeric / count(*), 4) AS churn_rate
FROM at_start s
GROUP BY s.month, s.month_start, s.month_end, s.complete, s.environment;

COMMENT ON VIEW analytics.monthly_churn IS 'Per UTC month: paid subscriptions active at its start, how many are not active at its end, and the rate.';

-- Every revoked transaction (refunded, or revoked from Family Sharing), subscriptions and one-time purchases alike.
-- A reversed refund re-signs the transaction without revocationDate, so it leaves this view.
CREATE VIEW analytics.refunds AS
SELECT t.environment, t.transaction_id, t.original_transaction_id, t.bundle_id, t.product_id, t.product_type,
       t.purchased_at, t.revoked_at, t.revoked_at - t.purchased_at AS time_to_refund,
       t.revocation_reason,
       CASE t.revocation_reason WHEN 0 THEN 'other' WHEN 1 THEN 'app_issue' END AS revocation_reason_name,
       t.revocation_type, t.revocation_percentage, t.is_trial, t.ownership,
       t.price, t.currency, t.price_amount,
       CASE WHEN t.revocation_type = 'FAMILY_REVOKE' THEN 0
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

COMMENT ON VIEW analytics.refunds IS 'Revoked transactions with their refunded amount (FAMILY_REVOKE refunds nothing; REFUND_PRORATED by revocationPercentage).';

-- One row per subscription whose first period was a free trial, with its first paid period if any.
CREATE VIEW analytics.trials AS
WITH firsts AS (
    SELECT DISTINCT ON (p.environment, p.original_transaction_id) p.*
    FROM analytics.subscription_periods p
    ORDER BY p.environment, p.original_transaction_id, p.period_start, p.transaction_id
)
SELECT f.environment, f.original_transaction_id, f.product_id,
       date_trunc('month', f.period_start AT TIME ZONE 'UTC')::date AS cohort_month,
       f.period_start AS trial_started_at, f.period_end AS trial_ends_at,
       c.transaction_id IS NOT NULL AS converted,
       c.transaction_id IS NULL AND f.active_until > now() AS pending,
       c.period_start AS converted_at, c.transaction_id AS converted_transaction_id, c.product_id AS converted_product_id,
       c.price AS converted_price, c.currency AS converted_currency
FROM firsts f
LEFT JOIN LATERAL (
    SELECT p.* FROM analytics.subscription_periods p
    WHERE p.environment = f.environment AND p.original_transaction_id = f.original_transaction_id
      AND p.period_start > f.period_start AND NOT p.is_trial AND p.price > 0
    ORDER BY p.period_start, p.transaction_id LIMIT 1
) c ON true
WHERE f.is_trial;

COMMENT ON VIEW analytics.trials IS 'Subscriptions that started with a free trial, and their first paid period if they converted.';

-- Trial conversion per cohort (UTC month the trial started).
CREATE VIEW analytics.trial_conversion AS
SELECT environment, cohort_month, product_id,
       count(*) AS trials,
       count(*) FILTER (WHERE converted) AS converted,
       count(*) FILTER (WHERE pending) AS pending,
       round(count(*) FILTER (WHERE converted)::numeric / count(*), 4) AS conversion_rate,
       round(count(*) FILTER (WHERE converted)::numeric / nullif(count(*) FILTER (WHERE NOT pending), 0), 4) AS conversion_rate_of_ended
FROM analytics.trials
GROUP BY environment, cohort_month, product_id;

COMMENT ON VIEW analytics.trial_conversion IS 'Per trial-start month and product: trials, conversions to a paid period, pending trials and rates.';

-- Gives `grantee` read access to the analytics schema and nothing else: direct privileges on every table, view
-- and sequence the caller owns in public and analytics are revoked first (privileges PUBLIC holds cannot be
-- revoked per role; see docs/analytics.md). Run by the schema owner; idempotent.
CREATE FUNCTION analytics.grant_read_access(grantee name) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    object record;
BEGIN
    FOR object IN
        SELECT c.oid::regclass AS relation
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname IN ('public', 'analytics') AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
          AND pg_has_role(c.relowner, 'USAGE')
    LOOP
        EXECUTE format('REVOKE ALL ON %s FROM %I', object.relation, grantee);
    END LOOP;
    IF pg_has_role((SELECT nspowner FROM pg_namespace WHERE nspname = 'public'), 'USAGE') THEN
        EXECUTE format('REVOKE CREATE ON SCHEMA public FROM %I', grantee);
    END IF;
    EXECUTE format('REVOKE CREATE ON SCHEMA analytics FROM %I', grantee);
    EXECUTE format('GRANT USAGE ON SCHEMA analytics TO %I', grantee);
    FOR object IN
        SELECT c.oid::regclass AS relation
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'analytics' AND c.relkind IN ('v', 'm')
    LOOP
        EXECUTE format('GRANT SELECT ON %s TO %I', object.relation, grantee);
    END LOOP;
    FOR object IN
        SELECT p.oid::regprocedure AS routine
        FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'analytics' AND p.proname <> 'grant_read_access'
    LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', object.routine, grantee);
    END LOOP;
    -- Views later migrations add to analytics are readable too (read only: SELECT is the only default granted).
    EXECUTE format('ALTER DEFAULT PRIVILEGES IN SCHEMA analytics GRANT SELECT ON TABLES TO %I', grantee);
END;
$$;

COMMENT ON FUNCTION analytics.grant_read_access(name) IS 'Grants a role read access to the analytics views and functions, and revokes its direct privileges on everything else the caller owns.';

REVOKE ALL ON FUNCTION analytics.grant_read_access(name) FROM PUBLIC;
REVOKE ALL ON FUNCTION analytics.billing_period(timestamptz, timestamptz, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION analytics.active_subscriptions_at(timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION analytics.mrr_at(timestamptz) FROM PUBLIC;

-- The analyst role. Roles are cluster-wide: it may already exist (another database of the cluster, or a DBA made
-- it), and migrations of two databases may race to create it. Without CREATEROLE the migration still succeeds:
-- it skips the role (a DBA creates it later and runs `SELECT analytics.grant_read_access('storeledger_analyst')`).
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'storeledger_analyst') THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND (rolsuper OR rolcreaterole)) THEN
            RAISE NOTICE 'storeledger_analyst does not exist and % may not create roles: skipping it; a DBA can run CREATE ROLE storeledger_analyst NOLOGIN, then the schema owner SELECT analytics.grant_read_access(''storeledger_analyst'')', current_user;
            RETURN;
        END IF;
        BEGIN
            CREATE ROLE storeledger_analyst NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;  -- created meanwhile by the migration of another database in this cluster
        END;
    END IF;
    PERFORM analytics.grant_read_access('storeledger_analyst');
    IF has_schema_privilege('storeledger_analyst', 'public', 'CREATE') THEN
        RAISE WARNING 'storeledger_analyst can CREATE in schema public (PUBLIC holds CREATE there, as before PostgreSQL 15); run REVOKE CREATE ON SCHEMA public FROM PUBLIC if nothing relies on it';
    END IF;
END;
$$;
