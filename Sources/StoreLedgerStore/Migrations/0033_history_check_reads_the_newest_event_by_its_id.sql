-- The first check after a change of history read `max(id), max(received_at)` of the whole log while holding the
-- history's advisory lock. No index leads with received_at, and PostgreSQL uses its min/max index shortcut only when
-- every aggregate of the query can, so that was a sequential scan of every partition of the log (seconds to minutes
-- on a large one), and after a failover every new connection's check (each receiver's first append, each worker's
-- first claim) waited behind it. The newest event is now read by its id through the primary key, one index probe
-- per partition. Its received_at can only be earlier than the log's largest received_at, so the window to reconcile
-- (which starts ten minutes before it) can only be wider, never narrower.
CREATE OR REPLACE FUNCTION storeledger_check_history() RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    now_identity record;
    last_seen    database_history%ROWTYPE;
    newest_id    bigint;
    newest_at    timestamptz;
    id_floor     bigint;
BEGIN
    SELECT * INTO now_identity FROM storeledger_history_identity();
    SELECT * INTO last_seen FROM database_history ORDER BY id DESC LIMIT 1;
    IF FOUND AND last_seen.system_identifier = now_identity.system_identifier AND last_seen.timeline = now_identity.timeline THEN
        RETURN false;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('storeledger/database_history', 0));
    SELECT * INTO last_seen FROM database_history ORDER BY id DESC LIMIT 1;
    IF NOT FOUND THEN
        INSERT INTO database_history (system_identifier, timeline) VALUES (now_identity.system_identifier, now_identity.timeline);
        RETURN false;
    END IF;
    IF last_seen.system_identifier = now_identity.system_identifier AND last_seen.timeline = now_identity.timeline THEN
        RETURN false;
    END IF;
    SELECT id, received_at INTO newest_id, newest_at FROM events ORDER BY id DESC LIMIT 1;
    -- Past anything the old history can have issued: a billion ids beyond what this one knows of, and at least
    -- (milliseconds since 1970) x 1000, which no earlier id reaches unless a million events a second were stored.
    SELECT greatest(last_value, coalesce(newest_id, 0)) + 1000000000 INTO id_floor FROM events_id_seq;
    id_floor := greatest(id_floor, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000);
    PERFORM setval('events_id_seq', id_floor);
    INSERT INTO database_history (
        system_identifier, timeline, previous_system_identifier, previous_timeline, last_event_id, last_received_at, event_id_floor
    ) VALUES (
        now_identity.system_identifier, now_identity.timeline, last_seen.system_identifier, last_seen.timeline, newest_id, newest_at, id_floor
    );
    RAISE WARNING 'storeledger: the database history changed (system %, timeline % -> system %, timeline %): events received after % may be lost; event ids continue from %',
        last_seen.system_identifier, last_seen.timeline, now_identity.system_identifier, now_identity.timeline, newest_at, id_floor;
    RETURN true;
END $$;

CREATE OR REPLACE FUNCTION storeledger_check_rewind(seen_high_water bigint, OUT rewound boolean, OUT high_water bigint)
LANGUAGE plpgsql AS $$
DECLARE
    now_identity record;
    newest_id    bigint;
    newest_at    timestamptz;
    id_floor     bigint;
BEGIN
    rewound := false;
    high_water := storeledger_event_high_water();
    IF high_water >= seen_high_water THEN
        RETURN;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtextextended('storeledger/database_history', 0));
    high_water := storeledger_event_high_water();
    IF high_water >= seen_high_water THEN
        RETURN;
    END IF;
    SELECT id, received_at INTO newest_id, newest_at FROM events ORDER BY id DESC LIMIT 1;
    id_floor := greatest(seen_high_water, high_water) + 1000000000;
    id_floor := greatest(id_floor, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000);
    PERFORM setval('events_id_seq', id_floor);
    SELECT * INTO now_identity FROM storeledger_history_identity();
    INSERT INTO database_history (
        system_identifier, timeline, previous_system_identifier, previous_timeline, last_event_id, last_received_at, event_id_floor
    ) VALUES (
        now_identity.system_identifier, now_identity.timeline, now_identity.system_identifier, now_identity.timeline,
        newest_id, newest_at, id_floor
    );
    RAISE WARNING 'storeledger: the event log went back (ids up to % were issued, the database now knows % at most): it was restored in place; events received after % may be lost; event ids continue from %',
        seen_high_water, high_water, newest_at, id_floor;
    rewound := true;
    high_water := id_floor;
END $$;
