-- The receiver's append in one round trip that answers only after the commit (issue 11).
--
-- An autocommitted INSERT ... RETURNING sends its row before the commit (the extended protocol commits at Sync), so
-- a 200 could precede a failing or lost commit. BEGIN / INSERT / COMMIT fixes that at the price of two more round
-- trips per notification. A procedure can commit by itself: CALL storeledger_append_committed(...) inserts, COMMITs
-- (with synchronous_commit on: after the WAL flush), and only then returns the new event's id as its INOUT
-- parameters. A commit that fails fails the CALL. Called outside any transaction block (it must be).

-- The one definition of an append: the event and its pending queue row, together.
CREATE FUNCTION storeledger_append_event(
    p_source text, p_environment_hint text, p_route text, p_body bytea, p_body_sha256 bytea,
    p_remote_address text, p_content_type text, p_user_agent text, p_request_id text, p_user_id text,
    OUT event_id bigint, OUT event_received_at timestamptz
) LANGUAGE sql AS $$
    WITH appended AS (
        INSERT INTO events (source, environment_hint, route, body, body_sha256,
                            remote_address, content_type, user_agent, request_id, user_id)
        VALUES (p_source, p_environment_hint, p_route, p_body, p_body_sha256,
                p_remote_address, p_content_type, p_user_agent, p_request_id, p_user_id)
        RETURNING id, received_at
    )
    INSERT INTO event_queue (event_id, event_received_at)
    SELECT id, received_at FROM appended
    RETURNING event_queue.event_id, event_queue.event_received_at
$$;

-- The append, committed before it answers.
CREATE PROCEDURE storeledger_append_committed(
    p_source text, p_environment_hint text, p_route text, p_body bytea, p_body_sha256 bytea,
    p_remote_address text, p_content_type text, p_user_agent text, p_request_id text, p_user_id text,
    INOUT appended_id bigint DEFAULT NULL, INOUT appended_at timestamptz DEFAULT NULL
) LANGUAGE plpgsql AS $$
BEGIN
    SELECT a.event_id, a.event_received_at INTO appended_id, appended_at
    FROM storeledger_append_event(p_source, p_environment_hint, p_route, p_body, p_body_sha256,
                                  p_remote_address, p_content_type, p_user_agent, p_request_id, p_user_id) a;
    COMMIT;
END $$;
