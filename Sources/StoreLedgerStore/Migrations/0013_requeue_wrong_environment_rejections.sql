-- Events the old verification rejected for the route they arrived on (issue 12).
--
-- Apple sends Sandbox notifications to the Production URL when no Sandbox URL is configured, and Sandbox data
-- carries no appAppleId. Before this version such a notification, received on a Production route while
-- APP_APPLE_ID was set, was judged by Production's rules and rejected with
--   wrongApp: the payload for '<bundle id>' carries no appAppleId, required in Production
-- Apple does not retry a 200, so nothing else would ever bring that data back. Each payload is now judged by the
-- environment it is signed for; this puts those events back to work, once, recorded in operator_actions as a
-- requeue (who: this migration). The new code never writes that reason, so nothing it rejects matches here; a
-- Production payload that really lacks its appAppleId is rejected again, with a reason that says so.

WITH selected AS (
    SELECT event_id, state
    FROM event_queue
    WHERE state = 'rejected'
      AND reject_reason LIKE 'wrongApp: %the payload for ''%'' carries no appAppleId, required in Production'
    FOR UPDATE
), requeued AS (
    UPDATE event_queue q
    SET state = 'pending', attempts = 0, available_at = now(), reject_reason = NULL,
        finished_at = NULL, updated_at = now()
    FROM selected
    WHERE q.event_id = selected.event_id
    RETURNING q.event_id, selected.state AS previous_state
)
INSERT INTO operator_actions (action, event_id, previous_state, requested_by, reason)
SELECT 'requeue', event_id, previous_state, 'migration 0013_requeue_wrong_environment_rejections',
       'rejected by Production''s rules for the route it arrived on; re-judged by the environment it is signed for (issue 12)'
FROM requeued;

-- Wake idle workers now rather than at their next poll.
SELECT pg_notify('storeledger_events', '');
