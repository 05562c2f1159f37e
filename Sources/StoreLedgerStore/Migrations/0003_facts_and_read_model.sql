-- Verified facts (what Apple signed, decoded, one row per distinct fact) and the read model
-- projected from them. Typed columns are generated from the stored JSON, so they can never
-- disagree with it. The read model (subscriptions, purchases) is disposable: it is a pure function
-- of the facts, which are themselves derived from the append-only events.

-- Epoch milliseconds (possibly fractional, as Xcode signs them) as a timestamptz.
CREATE FUNCTION storeledger_ms(value text) RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT
RETURN to_timestamp(value::float8 / 1000);

-- One row per notification (by notificationUUID); Apple's retries are deliveries of the same row.
CREATE TABLE notifications (
    notification_uuid       text        PRIMARY KEY,
    payload                 jsonb       NOT NULL,
    transaction_payload     jsonb,
    renewal_payload         jsonb,
    notification_type       text        GENERATED ALWAYS AS (payload ->> 'notificationType') STORED,
    subtype                 text        GENERATED ALWAYS AS (payload ->> 'subtype') STORED,
    signed_at               timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'signedDate')) STORED,
    environment             text        GENERATED ALWAYS AS (coalesce(payload #>> '{data,environment}', payload #>> '{summary,environment}', payload #>> '{appData,environment}')) STORED,
    bundle_id               text        GENERATED ALWAYS AS (coalesce(payload #>> '{data,bundleId}', payload #>> '{summary,bundleId}', payload #>> '{appData,bundleId}', payload #>> '{externalPurchaseToken,bundleId}')) STORED,
    app_apple_id            bigint      GENERATED ALWAYS AS ((coalesce(payload #>> '{data,appAppleId}', payload #>> '{summary,appAppleId}', payload #>> '{appData,appAppleId}', payload #>> '{externalPurchaseToken,appAppleId}'))::numeric::bigint) STORED,
    original_transaction_id text        GENERATED ALWAYS AS (coalesce(transaction_payload ->> 'originalTransactionId', renewal_payload ->> 'originalTransactionId')) STORED,
    transaction_id          text        GENERATED ALWAYS AS (transaction_payload ->> 'transactionId') STORED,
    product_id              text        GENERATED ALWAYS AS (coalesce(transaction_payload ->> 'productId', renewal_payload ->> 'productId', payload #>> '{summary,productId}')) STORED,
    status                  integer     GENERATED ALWAYS AS ((payload #>> '{data,status}')::integer) STORED,
    first_event_id          bigint      NOT NULL,
    last_event_id           bigint      NOT NULL,
    delivery_count          integer     NOT NULL DEFAULT 1,
    recorded_at             timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX notifications_subscription_idx ON notifications (environment, original_transaction_id);
CREATE INDEX notifications_type_idx ON notifications (notification_type, signed_at);

COMMENT ON TABLE notifications IS 'Verified App Store Server Notifications, one row per notificationUUID, with nested signed data decoded.';

-- Every event that delivered a notification (Apple retries with the same notificationUUID).
CREATE TABLE notification_deliveries (
    event_id          bigint      PRIMARY KEY,
    notification_uuid text        NOT NULL REFERENCES notifications (notification_uuid) DEFERRABLE INITIALLY DEFERRED,
    recorded_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX notification_deliveries_uuid_idx ON notification_deliveries (notification_uuid);

-- Verified transactions, one row per distinct signed content (a refund re-signs a transaction).
-- `standalone` marks those that arrived on their own (posted by an app, from the Server API),
-- rather than only nested in a notification.
CREATE TABLE transactions (
    fact_sha256             bytea       PRIMARY KEY,
    payload                 jsonb       NOT NULL,
    standalone              boolean     NOT NULL,
    environment             text        GENERATED ALWAYS AS (payload ->> 'environment') STORED,
    transaction_id          text        GENERATED ALWAYS AS (payload ->> 'transactionId') STORED,
    original_transaction_id text        GENERATED ALWAYS AS (payload ->> 'originalTransactionId') STORED,
    web_order_line_item_id  text        GENERATED ALWAYS AS (payload ->> 'webOrderLineItemId') STORED,
    bundle_id               text        GENERATED ALWAYS AS (payload ->> 'bundleId') STORED,
    product_id              text        GENERATED ALWAYS AS (payload ->> 'productId') STORED,
    product_type            text        GENERATED ALWAYS AS (payload ->> 'type') STORED,
    subscription_group      text        GENERATED ALWAYS AS (payload ->> 'subscriptionGroupIdentifier') STORED,
    purchased_at            timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'purchaseDate')) STORED,
    original_purchased_at   timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'originalPurchaseDate')) STORED,
    expires_at              timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'expiresDate')) STORED,
    revoked_at              timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'revocationDate')) STORED,
    revocation_reason       integer     GENERATED ALWAYS AS ((payload ->> 'revocationReason')::integer) STORED,
    offer_type              integer     GENERATED ALWAYS AS ((payload ->> 'offerType')::integer) STORED,
    offer_id                text        GENERATED ALWAYS AS (payload ->> 'offerIdentifier') STORED,
    price                   bigint      GENERATED ALWAYS AS ((payload ->> 'price')::numeric::bigint) STORED,
    currency                text        GENERATED ALWAYS AS (payload ->> 'currency') STORED,
    ownership               text        GENERATED ALWAYS AS (payload ->> 'inAppOwnershipType') STORED,
    app_account_token       text        GENERATED ALWAYS AS (nullif(payload ->> 'appAccountToken', '')) STORED,
    signed_at               timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'signedDate')) STORED,
    first_event_id          bigint      NOT NULL,
    recorded_at             timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX transactions_subscription_idx ON transactions (environment, original_transaction_id);
CREATE INDEX transactions_transaction_idx ON transactions (environment, transaction_id);

COMMENT ON TABLE transactions IS 'Verified transactions (JWSTransactionDecodedPayload), one row per distinct signed content.';

-- Verified renewal infos, one row per distinct signed content.
CREATE TABLE renewal_infos (
    fact_sha256              bytea       PRIMARY KEY,
    payload                  jsonb       NOT NULL,
    standalone               boolean     NOT NULL,
    environment              text        GENERATED ALWAYS AS (payload ->> 'environment') STORED,
    original_transaction_id  text        GENERATED ALWAYS AS (payload ->> 'originalTransactionId') STORED,
    product_id               text        GENERATED ALWAYS AS (payload ->> 'productId') STORED,
    auto_renew_product_id    text        GENERATED ALWAYS AS (payload ->> 'autoRenewProductId') STORED,
    auto_renew_status        integer     GENERATED ALWAYS AS ((payload ->> 'autoRenewStatus')::integer) STORED,
    expiration_intent        integer     GENERATED ALWAYS AS ((payload ->> 'expirationIntent')::integer) STORED,
    is_in_billing_retry      boolean     GENERATED ALWAYS AS ((payload ->> 'isInBillingRetryPeriod')::boolean) STORED,
    grace_period_expires_at  timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'gracePeriodExpiresDate')) STORED,
    price_increase_status    integer     GENERATED ALWAYS AS ((payload ->> 'priceIncreaseStatus')::integer) STORED,
    signed_at                timestamptz GENERATED ALWAYS AS (storeledger_ms(payload ->> 'signedDate')) STORED,
    first_event_id           bigint      NOT NULL,
    recorded_at              timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX renewal_infos_subscription_idx ON renewal_infos (environment, original_transaction_id);

COMMENT ON TABLE renewal_infos IS 'Verified renewal infos (JWSRenewalInfoDecodedPayload), one row per distinct signed content.';

-- The read model: one row per auto-renewable subscription, a fold of its verified facts.
CREATE TABLE subscriptions (
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    bundle_id               text,
    product_id              text,
    subscription_group      text,
    status                  text        NOT NULL CHECK (status IN ('active', 'grace_period', 'billing_retry', 'expired', 'revoked')),
    entitled                boolean     NOT NULL,
    latest_transaction_id   text,
    purchased_at            timestamptz,
    original_purchased_at   timestamptz,
    expires_at              timestamptz,
    grace_period_expires_at timestamptz,
    auto_renew              boolean,
    auto_renew_product_id   text,
    expiration_intent       integer,
    price_increase_status   integer,
    offer_type              integer,
    offer_id                text,
    ownership               text,
    app_account_token       text,
    revoked_at              timestamptz,
    revocation_reason       integer,
    revocation_type         text,
    price                   bigint,
    currency                text,
    storefront              text,
    last_signed_at          timestamptz,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, original_transaction_id)
);

CREATE INDEX subscriptions_app_account_token_idx ON subscriptions (app_account_token) WHERE app_account_token IS NOT NULL;

COMMENT ON TABLE subscriptions IS 'Read model: current state of each auto-renewable subscription (disposable; rebuilt from events).';
COMMENT ON COLUMN subscriptions.entitled IS 'Entitled by status (active or grace period); compare expires_at with the time of asking.';
COMMENT ON COLUMN subscriptions.price IS 'Milliunits of currency, as Apple signs it (10990 = 10.99).';

-- The read model for consumables, non-consumables and non-renewing subscriptions.
CREATE TABLE purchases (
    environment             text        NOT NULL,
    transaction_id          text        NOT NULL,
    original_transaction_id text,
    bundle_id               text,
    product_id              text,
    product_type            text,
    purchased_at            timestamptz,
    expires_at              timestamptz,
    quantity                integer,
    price                   bigint,
    currency                text,
    ownership               text,
    app_account_token       text,
    storefront              text,
    revoked_at              timestamptz,
    revocation_reason       integer,
    revocation_type         text,
    entitled                boolean     NOT NULL,
    last_signed_at          timestamptz,
    updated_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, transaction_id)
);

CREATE INDEX purchases_app_account_token_idx ON purchases (app_account_token) WHERE app_account_token IS NOT NULL;

COMMENT ON TABLE purchases IS 'Read model: one-time purchases and non-renewing subscriptions, with revocation (disposable).';

CREATE INDEX notifications_transaction_idx ON notifications (environment, transaction_id) WHERE transaction_id IS NOT NULL;
