-- A database put back in place (a volume snapshot restored, a base backup restored without archive recovery) keeps
-- its system identifier and timeline, and its own database_history rows go back with it: storeledger_check_history()
-- sees nothing. What does go back is the log's high-water mark, the largest event id issued (the id sequence and the
-- ids stored). Workers remember the highest mark they saw; one that sees the mark lower than that calls this, which
-- does what a change of history does: moves the id sequence past anything issued before (so no id names two bodies)
-- and records a change whose window (from the newest event still present) is reconciled from Apple's history.
-- Returns whether it recorded one, and the mark now. Concurrent callers serialize on the history's advisory lock.
CREATE FUNCTION storeledger_event_high_water() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT greatest((SELECT last_value FROM events_id_seq), (SELECT coalesce(max(id), 0) FROM events))
$$;

CREATE FUNCTION storeledger_check_rewind(seen_high_water bigint, OUT rewound boolean, OUT high_water bigint)
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
    SELECT max(id), max(received_at) INTO newest_id, newest_at FROM events;
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
