-- The queue's statistics (the console's queue page, `storeledger stats`, and every worker's queue metrics every few
-- seconds) read indexes instead of the whole of event_queue, which keeps every finished event: throughput over the
-- last minute is a range scan of the last minute's rows. (Depth of the unfinished states already reads the partial
-- indexes of 0002; the done count is exact on a small queue and pg_class's estimate on a large one.)
-- Each costs one more index entry per append (enqueued_at) and per completion (finished_at).
CREATE INDEX event_queue_enqueued_idx ON event_queue (enqueued_at);
CREATE INDEX event_queue_finished_idx ON event_queue (finished_at) WHERE finished_at IS NOT NULL;
