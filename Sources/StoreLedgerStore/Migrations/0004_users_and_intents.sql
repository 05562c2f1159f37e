-- The app-facing API's state: who owns which purchase, purchase intents, and server-to-server API keys.
--
-- Ownership is derived from the log: an event posted by an authenticated user carries that user's id
-- (events.user_id), so user links can be rebuilt from `events` like the read model. `user_links` holds the
-- current owner of each purchase; `user_link_history` records every link and transfer with the event that
-- caused it.

ALTER TABLE events ADD COLUMN user_id text;
COMMENT ON COLUMN events.user_id IS 'The authenticated user who posted it (app-facing routes), else NULL.';

-- The current owner of each purchase (subscription or one-time), by (environment, original transaction id).
CREATE TABLE user_links (
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    user_id                 text        NOT NULL,
    app_account_token       text,
    event_id                bigint      NOT NULL,
    linked_at               timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (environment, original_transaction_id)
);

CREATE INDEX user_links_user_idx ON user_links (user_id);

COMMENT ON TABLE user_links IS 'Current owner of each purchase. Policy: the latest authenticated claimant owns it (transfer on restore).';

-- Every link and transfer, append-only.
CREATE TABLE user_link_history (
    id                      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    environment             text        NOT NULL,
    original_transaction_id text        NOT NULL,
    from_user_id            text,
    to_user_id              text        NOT NULL,
    change                  text        NOT NULL CHECK (change IN ('linked', 'transferred')),
    reason                  text        NOT NULL,
    event_id                bigint      NOT NULL,
    recorded_at             timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX user_link_history_purchase_idx ON user_link_history (environment, original_transaction_id, id);
CREATE INDEX user_link_history_user_idx ON user_link_history (to_user_id, id);

COMMENT ON TABLE user_link_history IS 'Every link of a purchase to a user and every transfer between users, with the event that caused it.';

-- appAccountTokens we know the owner of: purchase intents' correlation ids and tokens first seen with a user.
CREATE TABLE app_account_tokens (
    app_account_token text        PRIMARY KEY CHECK (app_account_token = lower(app_account_token)),
    user_id           text        NOT NULL,
    origin            text        NOT NULL CHECK (origin IN ('purchase_intent', 'client')),
    created_at        timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX app_account_tokens_user_idx ON app_account_tokens (user_id);

COMMENT ON TABLE app_account_tokens IS 'Owners of appAccountTokens (lower-case UUIDs), from purchase intents or first use by a signed-in user.';

-- Purchase intents (seed 003): the correlation id is the appAccountToken the app passes to StoreKit.
-- An intent is completed by the verified transaction that carries its token (looked up, never stored twice).
CREATE TABLE purchase_intents (
    correlation_id uuid        PRIMARY KEY,
    user_id        text        NOT NULL,
    product_id     text        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);

CREATE INDEX purchase_intents_user_idx ON purchase_intents (user_id, created_at);

COMMENT ON TABLE purchase_intents IS 'Purchase intents; completed when a verified transaction with appAccountToken = correlation_id is recorded.';

CREATE INDEX transactions_app_account_token_idx ON transactions (app_account_token) WHERE app_account_token IS NOT NULL;

-- Server-to-server API keys, stored as SHA-256 digests (ADMIN_API_KEY from the environment also works).
CREATE TABLE api_keys (
    key_sha256 bytea       PRIMARY KEY CHECK (octet_length(key_sha256) = 32),
    name       text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

COMMENT ON TABLE api_keys IS 'Server-to-server API keys (SHA-256 of the key; the key itself is never stored).';
