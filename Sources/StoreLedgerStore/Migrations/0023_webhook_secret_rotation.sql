-- A rotated webhook secret overlaps the one it replaces: for a day after `storeledger webhooks add URL
-- --rotate-secret`, every delivery to the endpoint is signed with both (two v1= values in StoreLedger-Signature), so
-- its consumer verifies with either while it switches to the new one, and nothing fails in between.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret text, ADD COLUMN previous_secret_expires_at timestamptz;

COMMENT ON COLUMN webhook_endpoints.previous_secret IS 'The secret a rotation replaced; deliveries are signed with it too until previous_secret_expires_at.';
