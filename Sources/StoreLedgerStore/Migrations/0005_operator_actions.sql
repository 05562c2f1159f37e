-- Operators' interventions on the queue (requeue, replay), with who did it and why: an event that was
-- reprocessed can always be explained.

CREATE TABLE operator_actions (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    action         text        NOT NULL CHECK (action IN ('requeue', 'replay')),
    event_id       bigint      NOT NULL,
    previous_state text        NOT NULL,
    requested_by   text        NOT NULL,
    reason         text        NOT NULL,
    performed_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX operator_actions_event_idx ON operator_actions (event_id, id);

COMMENT ON TABLE operator_actions IS 'Every requeue and replay an operator asked for: which event, from which state, by whom and why.';
