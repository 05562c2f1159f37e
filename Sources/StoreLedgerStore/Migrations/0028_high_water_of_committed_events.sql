-- The log's high-water mark no longer reads the id sequence's last value. A sequence's advance is written to the WAL
-- ahead of its use but flushed only with a later commit, so a crash can put it back below a value a worker read while
-- an append was between its INSERT and its COMMIT: the worker then saw its mark go back, raised the "restored in
-- place" alarm, moved the id sequence on by a billion and recorded a window to reconcile, for an event that never
-- committed. The mark is now the largest of:
--   - the largest committed event id in the log;
--   - the largest in the queue, whose rows stay when a month of the log is detached for archiving (without it, a
--     detach before the month's first event would lower the mark);
--   - the id floor of the last recorded change of history: a rewind moves the id sequence past it, and the mark must
--     not stay below it until the next event commits (every sweep would record the same rewind again).
-- A database put back in place loses its newest committed events and queue rows (and any change recorded after the
-- snapshot), which is what the mark is for.
CREATE OR REPLACE FUNCTION storeledger_event_high_water() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT greatest((SELECT coalesce(max(id), 0) FROM events),
                    (SELECT coalesce(max(event_id), 0) FROM event_queue),
                    (SELECT coalesce(max(event_id_floor), 0) FROM database_history))
$$;
