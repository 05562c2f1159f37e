-- Which database history StoreLedger writes into, and what to do when it changes (issue 11).
--
-- A promoted standby (failover) or a restored backup continues from an earlier point of the log than the old
-- primary reached: with asynchronous replication, events acknowledged on the old primary after that point are gone,
-- and the new primary's id sequence is behind too, so it would hand their ids to different bodies. The history is
-- identified by the cluster's system identifier and its WAL timeline (a promotion or a point-in-time recovery starts
-- a new timeline; a logical copy is a new system). The first insert a database session makes checks it; when it is
-- not the one last seen, StoreLedger
--   1. moves the event id sequence past anything the old history could have issued, before any id is handed out,
--      so an event id never names two bodies, and
--   2. records the change with the window whose notifications may be lost, which workers with the App Store Server
--      API configured reconcile from Apple's notification history by themselves (docs/operations.md, "Failover").

CREATE TABLE database_history (
    id                         bigserial   PRIMARY KEY,
    system_identifier          text        NOT NULL,
    timeline                   integer     NOT NULL,
    noticed_at                 timestamptz NOT NULL DEFAULT now(),
    -- The history last seen before this one (NULL on the first row: the installation itself).
    previous_system_identifier text,
    previous_timeline          integer,
    -- The newest event this database still had when the change was noticed: events after it may be lost.
    last_event_id              bigint,
    last_received_at           timestamptz,
    -- The event id sequence was moved to at least this.
    event_id_floor             bigint,
    -- Set once the window was reconciled from Apple's notification history (or an operator said it is handled).
    reconciled_at              timestamptz,
    reconciled_by              text,
    last_reconcile_error       text
);

COMMENT ON TABLE database_history IS
    'Each database history (system identifier, WAL timeline) StoreLedger has written into; a row with a previous history is a failover or restore whose window may have lost acknowledged events.';

-- The history this database is on now: its system identifier and the timeline new WAL is written on.
CREATE FUNCTION storeledger_history_identity(OUT system_identifier text, OUT timeline integer)
LANGUAGE sql VOLATILE AS $$
    SELECT (SELECT s.system_identifier::text FROM pg_control_system() s),
           ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::integer
$$;

-- Compares the current history with the last one recorded; on a change, moves the id sequence on and records the
-- change. Returns whether it found one. Concurrent callers serialize on an advisory lock and re-read.
CREATE FUNCTION storeledger_check_history() RETURNS boolean
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
    INSERT INTO database_history (
        system_identifier, timeline, previous_system_identifier, previous_timeline, last_event_id, last_received_at, event_id_floor
    ) VALUES (
        now_identity.system_identifier, now_identity.timeline, last_seen.system_identifier, last_seen.timeline, newest_id, newest_at, id_floor
    );
    RAISE WARNING 'storeledger: the database history changed (system %, timeline % -> system %, timeline %): events received after % may be lost; event ids continue from %',
        last_seen.system_identifier, last_seen.timeline, now_identity.system_identifier, now_identity.timeline, newest_at, id_floor;
    RETURN true;
END $$;

-- The next event id, after this session's first check of the history (a session that saw no change does not look
-- again: a promotion or restore ends every session that was writing).
CREATE FUNCTION storeledger_next_event_id() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('storeledger.history_checked', true) IS DISTINCT FROM 'on' THEN
        PERFORM storeledger_check_history();
        PERFORM set_config('storeledger.history_checked', 'on', false);
    END IF;
    RETURN nextval('events_id_seq');
END $$;

ALTER TABLE events ALTER COLUMN id SET DEFAULT storeledger_next_event_id();

-- The installation's own history.
INSERT INTO database_history (system_identifier, timeline)
SELECT system_identifier, timeline FROM storeledger_history_identity();
