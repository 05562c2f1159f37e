import StoreLedgerHTTP

extension ReceiverConfiguration {
    /// A receiver for tests that are not about the store deadline: any port, and a minute to store an event instead of
    /// the production five seconds. `scripts/test` runs every suite at once on a two-core machine, where a fresh
    /// database's first INSERT was seen to take longer than five seconds, and the receiver then rightly answered 503.
    /// The deadline itself is tested with short ones (CommitFaultTests, PostgresRestartTests).
    static let underTest = ReceiverConfiguration(port: 0, storeTimeout: .seconds(60))
}
