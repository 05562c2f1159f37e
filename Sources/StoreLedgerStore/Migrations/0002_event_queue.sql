-- Processing state per event, kept apart from the (large, append-only) log.
--
-- States: pending -> processing -> done | rejected | dead; processing -> pending on retry or when a
-- lease expires. The hot indexes are partial: finished rows leave them, so claiming stays as fast
-- with a million finished events in history as with none.

CREATE TABLE event_queue (
    event_id          bigint      PRIMARY KEY,
    event_received_at timestamptz NOT NULL,
    state             text        NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'processing', 'done', 'rejected', 'dead')),
    attempts          integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    available_at      timestamptz NOT NULL DEFAULT now(),
    lease_owner       text,
    lease_expires_at  timestamptz,
    last_error        text,
    reject_reason     text,
    enqueued_at       timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    finished_at       timestamptz,
    CHECK ((state = 'processing') = (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL))
) WITH (fillfactor = 80);

COMMENT ON TABLE event_queue IS 'Processing state of each event: claimable work, leases, retries and outcomes.';
COMMENT ON COLUMN event_queue.available_at IS 'Not claimable before this time (retry backoff).';
COMMENT ON COLUMN event_queue.reject_reason IS 'Why an event can never be processed (e.g. its signature does not verify).';

-- Claim order: the ready pending rows, oldest availability first.
CREATE INDEX event_queue_ready_idx ON event_queue (available_at, event_id) WHERE state = 'pending';
-- Lease rescue: processing rows by lease expiry.
CREATE INDEX event_queue_leased_idx ON event_queue (lease_expires_at) WHERE state = 'processing';
-- Operators: parked events by outcome.
CREATE INDEX event_queue_parked_idx ON event_queue (state, finished_at) WHERE state IN ('rejected', 'dead');

-- Every attempt's failure, so a dead event carries its error history.
CREATE TABLE event_attempt_errors (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id    bigint      NOT NULL,
    attempt     integer     NOT NULL,
    failed_at   timestamptz NOT NULL DEFAULT now(),
    worker      text,
    outcome     text        NOT NULL CHECK (outcome IN ('retry', 'dead', 'rejected', 'lease_expired')),
    error       text        NOT NULL
);

CREATE INDEX event_attempt_errors_event_idx ON event_attempt_errors (event_id, id);

COMMENT ON TABLE event_attempt_errors IS 'One row per failed processing attempt of an event.';

-- Wakes idle workers (LISTEN storeledger_events) as soon as new work is committed.
CREATE FUNCTION storeledger_notify_new_work() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('storeledger_events', '');
    RETURN NULL;
END;
$$;

CREATE TRIGGER event_queue_notify_new_work
    AFTER INSERT ON event_queue
    FOR EACH STATEMENT EXECUTE FUNCTION storeledger_notify_new_work();
