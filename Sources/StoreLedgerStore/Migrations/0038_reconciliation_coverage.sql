-- How far the reconciler has asked Apple for every notification, per app and environment: each run of the workers'
-- reconciler asks for every notification since the end of the last window asked successfully for that app in that
-- environment (less a margin), so no stretch is left unasked whatever the interval, however long runs failed (within
-- what Apple keeps) and across restarts, while one app or environment that keeps failing (Production before the app's
-- first release) holds back only itself. Several workers share it: it only moves forward.
CREATE TABLE reconciliation_coverage (
    bundle_id     text        NOT NULL,
    environment   text        NOT NULL,
    covered_until timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (bundle_id, environment)
);

COMMENT ON TABLE reconciliation_coverage IS 'Per app and environment: every notification Apple sent up to covered_until has been asked for by the reconciler.';
