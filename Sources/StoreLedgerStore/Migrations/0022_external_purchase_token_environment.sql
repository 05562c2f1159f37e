-- An EXTERNAL_PURCHASE_TOKEN notification has no `environment` field: Apple marks a sandbox token by an
-- `externalPurchaseId` that starts with "SANDBOX" (the verifier checks the environment by the same rule). The
-- generated column notifications.environment reads only `data`, `summary` and `appData`, so it is NULL for those
-- notifications, and analysts filtering `analytics.notifications` on `environment` did not see them.
--
-- The view now derives it as the verifier does. The column itself stays as it is: on PostgreSQL 15 a generated
-- column's expression can be changed only by dropping and adding it, which rewrites the table and every view over
-- it, and nothing but the analytics view reads it for these notifications (they name no transaction, so the
-- lookups by (environment, original_transaction_id) never concern them).

CREATE OR REPLACE VIEW analytics.notifications AS
SELECT
    n.notification_uuid,
    n.notification_type,
    n.subtype,
    n.signed_at,
    coalesce(n.environment,
             CASE WHEN starts_with(n.payload #>> '{externalPurchaseToken,externalPurchaseId}', 'SANDBOX') THEN 'Sandbox'
                  WHEN n.payload #>> '{externalPurchaseToken,externalPurchaseId}' IS NOT NULL THEN 'Production' END)
                                                                       AS environment,
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

COMMENT ON COLUMN notifications.environment IS 'The environment of data, summary or appData; NULL for EXTERNAL_PURCHASE_TOKEN notifications (analytics.notifications derives theirs from externalPurchaseId).';
