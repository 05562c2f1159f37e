-- Each stored fold state's content digest (issue 15): the SHA-256 of its JSON text as the writer sent it. A worker
-- keeps the states it wrote or read decoded, with their digests, and asks for a state's text only when the stored
-- digest differs from the one it holds, so merging a new fact no longer decodes the state's JSON each time. NULL
-- (states written before this migration) never matches: such a state is read and decoded, and gets a digest the
-- next time it is written.
ALTER TABLE subscription_fold_states ADD COLUMN state_sha256 bytea;

COMMENT ON COLUMN subscription_fold_states.state_sha256 IS 'SHA-256 of the state''s JSON text as written (NULL: written before migration 0018); a worker that holds the state decoded under this digest does not read it again.';
