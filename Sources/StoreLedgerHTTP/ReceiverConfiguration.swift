public import StoreLedgerStore

/// Settings of the receiver process.
///
/// Environment keys (read by the `storeledger` command): `HOST` (default `0.0.0.0`), `PORT` (default
/// 8080), `RECEIVER_MAX_BODY_BYTES` (default 65536), `RECEIVER_STORE_TIMEOUT_MS` (default 5000),
/// `RECEIVER_CONCURRENT_COMMITS` (default 2), and the listener's
/// ``HTTPTimeouts`` (`HTTP_IDLE_TIMEOUT_SECONDS`, `HTTP_REQUEST_TIMEOUT_SECONDS`).
public struct ReceiverConfiguration: Sendable {
    /// The address to bind.
    public var host: String
    /// The TCP port to bind (0 picks a free one).
    public var port: Int
    /// Bodies larger than this are refused with 413 (default 64 KiB).
    public var maximumBodySize: Int
    /// How long storing may take before the receiver answers 503 (default 5 s; Apple times out ~30 s).
    public var storeTimeout: Duration
    /// How many append transactions may be in flight at once; notifications arriving meanwhile share the next
    /// one (group commit, see `EventLog`). Each holds a pooled connection.
    public var concurrentCommits: Int
    /// How long the listener waits for idle connections and for slow requests.
    public var timeouts: HTTPTimeouts

    /// Creates a configuration.
    public init(
        host: String = "0.0.0.0", port: Int = 8080, maximumBodySize: Int = 64 * 1024, storeTimeout: Duration = .seconds(5),
        concurrentCommits: Int = EventLog.defaultConcurrentCommits, timeouts: HTTPTimeouts = HTTPTimeouts()
    ) {
        self.host = host
        self.port = port
        self.maximumBodySize = maximumBodySize
        self.storeTimeout = storeTimeout
        self.concurrentCommits = concurrentCommits
        self.timeouts = timeouts
    }
}
