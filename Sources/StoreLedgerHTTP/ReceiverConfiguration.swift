import StoreLedgerStore

/// Settings of the receiver process.
///
/// Environment keys (read by the `storeledger` command): `HOST` (default `0.0.0.0`), `PORT` (default
/// 8080), `RECEIVER_MAX_BODY_BYTES` (default 65536), `RECEIVER_STORE_TIMEOUT_MS` (default 5000),
/// `RECEIVER_CONCURRENT_COMMITS` (default 2), and the listener's
/// ``HTTPTimeouts`` (`HTTP_IDLE_TIMEOUT_SECONDS`, `HTTP_REQUEST_TIMEOUT_SECONDS`).
package struct ReceiverConfiguration: Sendable {
    /// The address to bind.
    package var host: String
    /// The TCP port to bind (0 picks a free one).
    package var port: Int
    /// Bodies larger than this are refused with 413 (default 64 KiB).
    package var maximumBodySize: Int
    /// How long storing may take before the receiver answers 503 (default 5 s; Apple times out ~30 s).
    package var storeTimeout: Duration
    /// How many append transactions may be in flight at once; notifications arriving meanwhile share the next
    /// one (group commit, see `EventLog`). Each holds a pooled connection.
    package var concurrentCommits: Int
    /// How long the listener waits for idle connections and for slow requests.
    package var timeouts: HTTPTimeouts
    /// How long `/readyz` may take to reach the database before it answers 503 (default 2 s: a load balancer's
    /// probe must not hang).
    package var readinessTimeout: Duration
    /// Whose address a notification's row records (`events.remote_address`): the peer's, or behind a trusted proxy
    /// (`TRUSTED_PROXIES`: the TLS-terminating load balancer every deployment has) the sender's from `X-Forwarded-For`.
    package var clientAddresses: ClientAddressResolver

    /// Creates a configuration.
    package init(
        host: String = "0.0.0.0", port: Int = 8080, maximumBodySize: Int = 64 * 1024, storeTimeout: Duration = .seconds(5),
        concurrentCommits: Int = EventLog.defaultConcurrentCommits, timeouts: HTTPTimeouts = HTTPTimeouts(),
        readinessTimeout: Duration = .seconds(2), clientAddresses: ClientAddressResolver = ClientAddressResolver()
    ) {
        self.host = host
        self.port = port
        self.maximumBodySize = maximumBodySize
        self.storeTimeout = storeTimeout
        self.concurrentCommits = concurrentCommits
        self.timeouts = timeouts
        self.readinessTimeout = readinessTimeout
        self.clientAddresses = clientAddresses
    }
}
