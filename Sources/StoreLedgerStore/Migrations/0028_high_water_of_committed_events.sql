-- The log's high-water mark is the largest id of a committed event, no longer also the id sequence's last value.
-- A sequence's advance is written to the WAL ahead of its use but flushed only with a later commit, so a crash can put
-- it back below a value a worker read while an append was between its INSERT and its COMMIT: the worker then saw its
-- mark go back, raised the "restored in place" alarm, moved the id sequence on by a billion and recorded a window to
-- reconcile, for an event that never committed. A committed event survives a crash, and a database put back in place
-- loses the newest committed events, which is what the mark is for.
CREATE OR REPLACE FUNCTION storeledger_event_high_water() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max(id), 0) FROM events
$$;
