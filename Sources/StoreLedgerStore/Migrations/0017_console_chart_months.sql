-- The console's charts, pre-aggregated (issue 13: every console page answers in <= 100 ms on 100,000
-- subscriptions). Computing a chart over the period snapshot (console_chart_periods, migration 0015) took seconds
-- per filter combination on a large ledger; now the background refresh (ChartStore.refresh, every
-- CONSOLE_CHART_REFRESH_MINUTES) also sums every chart's numerators and denominators per month, environment, app,
-- product and currency into this table, and a page request only adds up the rows its filters select: a few
-- thousand at most, whatever the ledger's size.
--
-- `source` says which chart's numbers a row holds (the other columns stay 0):
--   activity  paid_at_end, trials_at_end, mrr_at_end: subscriptions giving access at the month's end (now for the
--             month the snapshot was taken in; a later month reads that month's row), one period per subscription
--             (its latest), as analytics.active_subscriptions_at.
--   churn     active_at_start, churned: paid subscriptions active at the month's first instant, and of those the
--             ones with no period active at its end (now for the current month), as analytics.monthly_churn.
--   starts    new_periods, renewing_periods: billing periods that began in the month, first and later ones.
--   refunds   refunds, refunded_amount: analytics.refunds by revocation month, Family Sharing revocations excluded.
--   trials    trials_*: analytics.trials by cohort (start) month: started, converted, pending, abandoned.
-- Counting "one period per subscription" depends on the product filter (a subscription that changed product is
-- counted under its latest period of the chosen product), so `activity` and `churn` rows come twice: with
-- all_products (product_id NULL, read when no product is chosen) and per product (read when one is). The other
-- sources are plain sums and come per product only. A subscription's periods share one app (bundle id).
CREATE TABLE console_chart_months (
    source           text    NOT NULL CHECK (source IN ('activity', 'churn', 'starts', 'refunds', 'trials')),
    month            date    NOT NULL,
    environment      text,
    bundle_id        text,
    product_id       text,
    all_products     boolean NOT NULL,
    currency         text,
    paid_at_end      integer NOT NULL DEFAULT 0,
    trials_at_end    integer NOT NULL DEFAULT 0,
    mrr_at_end       numeric,
    active_at_start  integer NOT NULL DEFAULT 0,
    churned          integer NOT NULL DEFAULT 0,
    new_periods      integer NOT NULL DEFAULT 0,
    renewing_periods integer NOT NULL DEFAULT 0,
    refunds          integer NOT NULL DEFAULT 0,
    refunded_amount  numeric,
    trials_started   integer NOT NULL DEFAULT 0,
    trials_converted integer NOT NULL DEFAULT 0,
    trials_pending   integer NOT NULL DEFAULT 0,
    trials_abandoned integer NOT NULL DEFAULT 0
);

CREATE INDEX console_chart_months_idx ON console_chart_months (source, all_products, month);

COMMENT ON TABLE console_chart_months IS 'The web console''s chart numbers per month, environment, app, product and currency, summed from the snapshots by the background refresh; a chart page adds up the rows its filters select.';

-- A snapshot taken before this table existed has no sums: forget it, so the next refresh takes a complete one.
DELETE FROM console_chart_snapshot;
