-- Webhook events carry a sequence (0029) that hosts apply in order, ignoring one not above the last they applied. A
-- change of history (a promoted standby that was behind, a database restored in place) puts webhook_event_sequence
-- back with everything else, while the hosts already received the numbers the old history issued: the new history
-- would issue them again, and hosts would drop real changes (a refund, an expiry) as old. So a change of history moves
-- the sequence past anything the old one can have issued, as it moves the event id sequence, and a session draws its
-- first sequence number only after checking the history, as its first event id does.

-- Moves webhook_event_sequence past anything an earlier history can have issued: a billion beyond what this one
-- knows of, and at least (milliseconds since 1970) x 1000, which no earlier number reaches unless a million webhook
-- events a second were enqueued. Returns the new floor.
CREATE FUNCTION storeledger_move_webhook_sequence() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    sequence_floor bigint;
BEGIN
    SELECT greatest(last_value + 1000000000, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000)
    INTO sequence_floor FROM webhook_event_sequence;
    PERFORM setval('webhook_event_sequence', sequence_floor);
    RETURN sequence_floor;
END $$;

-- The next webhook sequence number, after this session's first check of the history (storeledger_next_event_id's
-- rule: a session that saw no change does not look again, as a promotion or restore ends every session).
CREATE FUNCTION storeledger_next_webhook_sequence() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('storeledger.history_checked', true) IS DISTINCT FROM 'on' THEN
        PERFORM storeledger_check_history();
        PERFORM set_config('storeledger.history_checked', 'on', false);
    END IF;
    RETURN nextval('webhook_event_sequence');
END $$;

-- 0011's and 0025's functions as they were, and the webhook sequence moved beside the event ids.
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
    SELECT max(id), max(received_at) INTO newest_id, newest_at FROM events;
    -- Past anything the old history can have issued: a billion ids beyond what this one knows of, and at least
    -- (milliseconds since 1970) x 1000, which no earlier id reaches unless a million events a second were stored.
    SELECT greatest(last_value, coalesce(newest_id, 0)) + 1000000000 INTO id_floor FROM events_id_seq;
    id_floor := greatest(id_floor, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000);
    PERFORM setval('events_id_seq', id_floor);
    PERFORM storeledger_move_webhook_sequence();
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
    SELECT max(id), max(received_at) INTO newest_id, newest_at FROM events;
    id_floor := greatest(seen_high_water, high_water) + 1000000000;
    id_floor := greatest(id_floor, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000);
    PERFORM setval('events_id_seq', id_floor);
    PERFORM storeledger_move_webhook_sequence();
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
