-- The dispatcher claims due deliveries endpoint by endpoint (a few of each at most, so that one endpoint that hangs
-- cannot take every delivery slot while the others wait): each endpoint's oldest due deliveries, read in order through
-- this index instead of sorting all of that endpoint's pending deliveries on every claim.
CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'pending';
