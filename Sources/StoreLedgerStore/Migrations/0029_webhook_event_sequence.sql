-- Webhook events carry a sequence number: the order they were enqueued in, increasing across the whole outbox. A
-- receiver applies a purchase's events in that order and ignores one older than the last it applied. occurred_at
-- (when Apple signed the fact behind a change) cannot order them: a rebuild's repair of a row announces the same
-- facts, so the same occurred_at as the wrong event before it, and a late older fact that changes a row is older.
CREATE SEQUENCE webhook_event_sequence AS bigint;

ALTER TABLE webhook_events ADD COLUMN sequence bigint;

COMMENT ON COLUMN webhook_events.sequence IS 'The order the event was enqueued in (webhook_event_sequence), also in its payload: apply a purchase''s events in this order.';
