-- When an operator last put a finished event back in the queue (`storeledger requeue` or `replay`, or the console's
-- buttons). The oldest pending event's age (`storeledger stats`, the console's queue page,
-- storeledger_queue_oldest_pending_seconds and its alerts) counts from it, not from the event's first enqueue: a replay
-- of last month is work an operator asked for, not a ledger weeks behind Apple. NULL for events never requeued; adding
-- the column rewrites nothing.
ALTER TABLE event_queue ADD COLUMN requeued_at timestamptz;

COMMENT ON COLUMN event_queue.requeued_at IS 'When an operator last requeued or replayed the event (NULL: never); the pending age counts from it.';
