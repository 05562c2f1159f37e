-- A month whose events already sit in events_default (its partition was not created in time: no worker ran through
-- the three months made ahead, or every try failed) can never get a partition: PostgreSQL refuses to create one for a
-- range the default partition holds rows of. That refusal aborted the whole call, so no later month was created
-- either, every later month's events landed in the default too, and the hourly sweep failed the same way from then
-- on. Such a month is now left out, with a warning, and the months after it are still created, so the default stops
-- growing from the next month on once a worker runs again. The events of the month left out stay where they are, stored and processed
-- like any other; only detaching them (retention) needs an operator (docs/operations.md, "The event log"). Each worker's
-- sweep logs an error while the default partition holds events.
CREATE OR REPLACE FUNCTION storeledger_ensure_event_partitions(
    months_ahead integer DEFAULT 3,
    from_month timestamptz DEFAULT now()
) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    month_start date := date_trunc('month', from_month AT TIME ZONE 'UTC')::date;
    lower_bound timestamptz;
    upper_bound timestamptz;
    partition_name text;
    created integer := 0;
BEGIN
    FOR i IN 0..months_ahead LOOP
        lower_bound := (month_start + make_interval(months => i))::timestamp AT TIME ZONE 'UTC';
        upper_bound := (month_start + make_interval(months => i + 1))::timestamp AT TIME ZONE 'UTC';
        partition_name := format('events_%s', to_char(lower_bound AT TIME ZONE 'UTC', 'YYYY_MM'));
        IF to_regclass(partition_name) IS NULL THEN
            IF EXISTS (SELECT 1 FROM events_default WHERE received_at >= lower_bound AND received_at < upper_bound) THEN
                RAISE WARNING 'events_default holds events received in %, so that month gets no partition; later months are still created',
                    to_char(lower_bound AT TIME ZONE 'UTC', 'YYYY-MM');
                CONTINUE;
            END IF;
            EXECUTE format(
                'CREATE TABLE %I PARTITION OF events FOR VALUES FROM (%L) TO (%L)',
                partition_name, lower_bound, upper_bound);
            EXECUTE format(
                'CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION storeledger_events_append_only()',
                partition_name || '_no_truncate', partition_name);
            created := created + 1;
        END IF;
    END LOOP;
    RETURN created;
END;
$$;
