-- Each stored fold state's version (issue 15) replaces the SHA-256 of its text (migration 0018). A worker keeps the
-- states it wrote or read decoded, each under the version stored beside it, and asks for a state's text only when the
-- stored version differs from the one it holds. A version is made once per write (a random per-process prefix and a
-- counter), so it names one write as the digest named one text, without hashing every state the worker writes (a
-- hundredth of a rebuild's CPU with the digest's hex text). NULL (states written before this migration) never
-- matches: such a state is read and decoded, and gets a version the next time it is written.
--
-- The digest column is dropped, not left beside the new one: a process of an older build still running would
-- otherwise replace a state and leave its version as it was, and a newer process holding that version would merge
-- into the state it holds rather than the one stored. Without the column, such a process's write fails and its
-- events are retried (by a process of this build).
ALTER TABLE subscription_fold_states DROP COLUMN state_sha256, ADD COLUMN state_version uuid;

COMMENT ON COLUMN subscription_fold_states.state_version IS 'Made once per write of the state (NULL: written before migration 0021); a worker that holds the state decoded under this version does not read it again.';
