-- The append-only raw event log: every input StoreLedger ever accepted, byte for byte.
--
-- Range-partitioned by month on received_at from the start, so retention and archival are a
-- DETACH PARTITION, never a DELETE. Partitions are created ahead of time by
-- storeledger_ensure_event_partitions(); a DEFAULT partition catches anything outside them so an
-- insert can never fail for want of a partition.

CREATE SEQUENCE events_id_seq AS bigint;

CREATE TABLE events (
    id               bigint      NOT NULL DEFAULT nextval('events_id_seq'),
    received_at      timestamptz NOT NULL DEFAULT now(),
    source           text        NOT NULL
        CHECK (source IN ('apple_notification', 'client', 'server_api', 'reconciliation')),
    environment_hint text
        CHECK (environment_hint IN ('production', 'sandbox')),
    route            text,
    body             bytea       NOT NULL,
    body_sha256      bytea       NOT NULL CHECK (octet_length(body_sha256) = 32),
    remote_address   text,
    content_type     text,
    user_agent       text,
    request_id       text,
    PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);

ALTER SEQUENCE events_id_seq OWNED BY events.id;

COMMENT ON TABLE events IS 'Append-only raw log of every accepted input (StoreLedger''s source of truth).';
COMMENT ON COLUMN events.body IS 'The request body exactly as received, byte for byte.';
COMMENT ON COLUMN events.environment_hint IS 'The environment the route implies (production/sandbox); the signed payload decides.';

CREATE INDEX events_body_sha256_idx ON events (body_sha256);

CREATE TABLE events_default PARTITION OF events DEFAULT;

-- Append-only enforcement. Row triggers on the partitioned table are cloned to every partition;
-- TRUNCATE triggers are statement-level and are added to each partition as it is created.
CREATE FUNCTION storeledger_events_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege',
              HINT = 'Detach an old partition to archive it; never rewrite the log.';
END;
$$;

CREATE TRIGGER events_no_update_or_delete
    BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION storeledger_events_append_only();

CREATE TRIGGER events_no_truncate
    BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION storeledger_events_append_only();

CREATE TRIGGER events_default_no_truncate
    BEFORE TRUNCATE ON events_default
    FOR EACH STATEMENT EXECUTE FUNCTION storeledger_events_append_only();

-- Creates the monthly partitions from the month of `from_month` through `months_ahead` months after
-- it (idempotent) and returns how many it created. Each gets the TRUNCATE guard.
CREATE FUNCTION storeledger_ensure_event_partitions(
    months_ahead integer DEFAULT 3,
    from_month timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    month_start date := date_trunc('month', from_month AT TIME ZONE 'UTC')::date;
    lower_bound date;
    upper_bound date;
    partition_name text;
    created integer := 0;
BEGIN
    FOR i IN 0..months_ahead LOOP
        lower_bound := (month_start + make_interval(months => i))::date;
        upper_bound := (month_start + make_interval(months => i + 1))::date;
        partition_name := format('events_%s', to_char(lower_bound, 'YYYY_MM'));
        IF to_regclass(partition_name) IS NULL THEN
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                partition_name,
                (lower_bound::timestamp AT TIME ZONE 'UTC'),
                (upper_bound::timestamp AT TIME ZONE 'UTC'));
            EXECUTE format(
                'CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION storeledger_events_append_only()',
                partition_name || '_no_truncate', partition_name);
            created := created + 1;
        END IF;
    END LOOP;
    RETURN created;
END;
$$;

SELECT storeledger_ensure_event_partitions(3);
