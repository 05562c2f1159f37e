-- Notifications the reconciler appended from Get Notification History, by notificationUUID, so a notification
-- that never verifies is not appended again on every run.

CREATE TABLE reconciled_notifications (
    notification_uuid text        PRIMARY KEY,
    event_id          bigint      NOT NULL,
    environment       text        NOT NULL,
    reconciled_at     timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE reconciled_notifications IS 'Notifications found by reconciliation (Get Notification History) and appended to the log.';
