-- The incremental fold's state per subscription (issue 15): the winning evidence of each column
-- (SubscriptionFoldState, JSON), so that a new fact merges into its row without reading the row's whole
-- history. Like the read model it is derived and disposable: a row without a state (folded before this
-- migration, or whose facts the state cannot summarise exactly) is refolded from all of its facts the next
-- time a fact arrives, and gets one then. Rebuild fills it in its shadow and swaps it in with the facts.
CREATE TABLE subscription_fold_states (
    environment             text  NOT NULL,
    original_transaction_id text  NOT NULL,
    state                   jsonb NOT NULL,
    PRIMARY KEY (environment, original_transaction_id)
);

COMMENT ON TABLE subscription_fold_states IS 'Incremental fold state per subscription (derived, disposable): the winning evidence of each column of its subscriptions row.';
