-- A purchase intent records the environment its host declared when creating it (seed 003: the web passes the
-- environment the app detected, `sandbox` or `production`; Xcode StoreKit testing records `xcode`). It is the host's
-- statement, kept as sent; the completing transaction's own environment is Apple's and is read from `transactions`.
-- NULL: none declared (every intent created before this migration).
ALTER TABLE purchase_intents
    ADD COLUMN environment text CHECK (environment IN ('sandbox', 'production', 'xcode'));

COMMENT ON COLUMN purchase_intents.environment IS 'The environment the host declared at creation (sandbox, production, xcode), NULL when none; the completing transaction''s own is in transactions.environment.';
