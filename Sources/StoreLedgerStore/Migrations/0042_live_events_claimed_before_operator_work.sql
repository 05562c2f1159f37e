-- A notification Apple just sent is claimed before work an operator asked for. Claims took pending events in
-- available-time order, and a requeue or replay makes its events available at once: a replay of last month put every
-- notification arriving after it behind the whole backlog, so "is this user premium?" answered stale for as long as
-- the replay took (minutes for a month, hours for a year). Claims now take events never requeued first (this index,
-- in available-time order) and requeued ones (requeued_at set: `requeue`, `replay`, the console's buttons) only to fill
-- what remains of a batch (event_queue_ready_idx). Under live traffic that fills every batch, operator work waits.
-- Building the index reads event_queue once; appends wait for it (about a second per million events).
CREATE INDEX event_queue_live_ready_idx ON event_queue (available_at, event_id) WHERE state = 'pending' AND requeued_at IS NULL;

COMMENT ON INDEX event_queue_live_ready_idx IS
    'Pending events never requeued, in claim order: claims take these before events an operator requeued or replayed.';
