-- Outgoing webhooks: every change of a subscription's or purchase's entitlement, as the projection detects it,
-- becomes a normalized event (in the same transaction: a transactional outbox), delivered to each active
-- endpoint with an HMAC-SHA256 signature, retried with backoff, every attempt logged. Delivery never blocks
-- projection.

CREATE TABLE webhook_endpoints (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url        text        NOT NULL UNIQUE CHECK (url ~ '^https?://'),
    secret     text        NOT NULL,
    active     boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE webhook_endpoints IS 'Where entitlement events are delivered (storeledger webhooks add|list|remove).';

-- The event id is derived from the change itself, so detecting the same change twice (a replay) adds nothing.
CREATE TABLE webhook_events (
    id                      uuid        PRIMARY KEY,
    type                    text        NOT NULL,
    user_id                 text,
    app_account_token       text,
    product_id              text,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    transaction_id          text,
    entitled                boolean     NOT NULL,
    expires_at              timestamptz,
    occurred_at             timestamptz NOT NULL,
    payload                 jsonb       NOT NULL,
    created_at              timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX webhook_events_purchase_idx ON webhook_events (environment, original_transaction_id, created_at);

COMMENT ON TABLE webhook_events IS 'Normalized entitlement changes (subscription.started, .renewed, .expired, …) to deliver; ids are stable.';

CREATE TABLE webhook_deliveries (
    event_id        uuid        NOT NULL REFERENCES webhook_events (id),
    endpoint_id     bigint      NOT NULL REFERENCES webhook_endpoints (id),
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_status     integer,
    last_error      text,
    delivered_at    timestamptz,
    PRIMARY KEY (event_id, endpoint_id)
);

CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

COMMENT ON TABLE webhook_deliveries IS 'One row per event and endpoint: pending until delivered, failed after its last attempt.';

CREATE TABLE webhook_delivery_attempts (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     uuid        NOT NULL,
    endpoint_id  bigint      NOT NULL,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    status_code  integer,
    error        text,
    duration_ms  double precision NOT NULL
);

CREATE INDEX webhook_delivery_attempts_event_idx ON webhook_delivery_attempts (event_id, id);

COMMENT ON TABLE webhook_delivery_attempts IS 'The delivery log: every attempt with its HTTP status or error and duration.';
