-- Webhook events carry a sequence (0029) that hosts apply in order, ignoring one not above the last they applied. A
-- change of history (a promoted standby that was behind, a database restored in place) puts webhook_event_sequence
-- back with everything else, while the hosts already received the numbers the old history issued: the new history
-- would issue them again, and hosts would drop real changes (a refund, an expiry) as old. So a change of history moves
-- the sequence past anything the old one can have issued, as it moves the event id sequence, and a session draws its
-- first sequence number only after checking the history, as its first event id does.

-- Moves webhook_event_sequence past anything an earlier history can have issued: a billion beyond what this one
-- knows of, and at least (milliseconds since 1970) x 1000, which no earlier number reaches unless a million webhook
-- events a second were enqueued. It runs when a change of history is recorded: both checks that find one
-- (storeledger_check_history, 0011; storeledger_check_rewind, 0025) insert a database_history row naming the previous
-- history, in the transaction that moves the event ids on.
CREATE FUNCTION storeledger_move_webhook_sequence() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setval(
        'webhook_event_sequence',
        (SELECT greatest(last_value + 1000000000, (extract(epoch FROM clock_timestamp()) * 1000)::bigint * 1000) FROM webhook_event_sequence));
    RETURN NULL;
END $$;

CREATE TRIGGER database_history_moves_webhook_sequence
AFTER INSERT ON database_history
FOR EACH ROW WHEN (NEW.previous_system_identifier IS NOT NULL)
EXECUTE FUNCTION storeledger_move_webhook_sequence();

-- Checks the history unless this session already did (storeledger_next_event_id's rule: a session that saw no change
-- does not look again, as a promotion or restore ends every session).
CREATE FUNCTION storeledger_check_history_once() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('storeledger.history_checked', true) IS DISTINCT FROM 'on' THEN
        PERFORM storeledger_check_history();
        PERFORM set_config('storeledger.history_checked', 'on', false);
    END IF;
END $$;

-- The next webhook sequence number, after this session's check of the history.
CREATE FUNCTION storeledger_next_webhook_sequence() RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM storeledger_check_history_once();
    RETURN nextval('webhook_event_sequence');
END $$;
