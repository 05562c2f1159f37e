-- The web console (issue 13, CONSOLE=on): its users, their sessions, the console role of API keys, and the indexes
-- that keep its pages bounded on a large ledger.
--
-- Passwords are stored as salted, slow hashes (PBKDF2-HMAC-SHA256, the parameters inside the text); a session is
-- stored only as the SHA-256 of its random token, so a copy of this table logs nobody in.

CREATE TABLE console_users (
    name          text        PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9._@-]{1,64}$'),
    role          text        NOT NULL CHECK (role IN ('viewer', 'operator')),
    password_hash text        NOT NULL CHECK (password_hash LIKE 'pbkdf2-sha256$%'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE console_users IS 'Web console users (storeledger console-user create|list|delete); passwords as PBKDF2-SHA256 hashes.';

-- A signed-in browser. `principal` is the console user's name, or `api-key:NAME` / `admin-api-key` for a session
-- opened with an API key; the role is fixed at sign-in.
CREATE TABLE console_sessions (
    token_sha256 bytea       PRIMARY KEY CHECK (octet_length(token_sha256) = 32),
    principal    text        NOT NULL,
    role         text        NOT NULL CHECK (role IN ('viewer', 'operator')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);

CREATE INDEX console_sessions_principal_idx ON console_sessions (principal);
CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at);

COMMENT ON TABLE console_sessions IS 'Web console sessions: SHA-256 of the random session token only, expiring (CONSOLE_SESSION_HOURS).';

-- An API key logs in to the console as a viewer unless it was created for the operator role
-- (storeledger api-key create NAME --console-role operator).
ALTER TABLE api_keys ADD COLUMN console_role text NOT NULL DEFAULT 'viewer' CHECK (console_role IN ('viewer', 'operator'));

COMMENT ON COLUMN api_keys.console_role IS 'The web console role a session opened with this key gets (viewer unless created with --console-role operator).';

-- The webhooks page lists the most recent deliveries: newest events first, bounded.
CREATE INDEX webhook_events_created_idx ON webhook_events (created_at DESC, id);
-- The endpoints table beside it counts each endpoint's pending and failed deliveries.
CREATE INDEX webhook_deliveries_endpoint_state_idx ON webhook_deliveries (endpoint_id, state);

-- Customer lookup by transaction id across environments, and a user's tokens, are served by the existing indexes
-- (transactions_transaction_idx, purchases primary key, app_account_tokens_user_idx, user_links_user_idx).
-- A notification lookup by a transaction id a notification carried (the timeline's raw event links) uses
-- notifications_transaction_idx.
