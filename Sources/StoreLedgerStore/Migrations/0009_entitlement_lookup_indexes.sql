-- Indexes for the app-facing lookups: a user's purchases by the key user links use, and appAccountTokens
-- compared case-insensitively (Apple writes UUIDs in lower case; apps do not always).

CREATE INDEX purchases_owner_key_idx ON purchases (environment, (coalesce(original_transaction_id, transaction_id)));
CREATE INDEX subscriptions_app_account_token_lower_idx ON subscriptions (lower(app_account_token)) WHERE app_account_token IS NOT NULL;
CREATE INDEX purchases_app_account_token_lower_idx ON purchases (lower(app_account_token)) WHERE app_account_token IS NOT NULL;
CREATE INDEX transactions_app_account_token_lower_idx ON transactions (lower(app_account_token)) WHERE app_account_token IS NOT NULL;
