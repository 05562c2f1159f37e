package import StoreLedgerHTTP
import StoreLedgerStore

extension Settings {
    /// The receiver's settings: `HOST`, `PORT`, `RECEIVER_MAX_BODY_BYTES`, `RECEIVER_STORE_TIMEOUT_MS`,
    /// `RECEIVER_CONCURRENT_COMMITS`, the listener's timeouts (``httpTimeouts()``) and `TRUSTED_PROXIES`
    /// (``trustedProxies()``, for the address a notification's row records). `HOST` defaults to `defaultHost`: every
    /// interface for `serve`, loopback for `dev`.
    package func receiver(defaultHost: String = "0.0.0.0") throws(SettingsError) -> ReceiverConfiguration {
        let storeMilliseconds = try int("RECEIVER_STORE_TIMEOUT_MS", default: 5000, in: 100...60000)
        let timeouts = try httpTimeouts()
        return ReceiverConfiguration(
            host: string("HOST") ?? defaultHost,
            port: try int("PORT", default: 8080, in: 0...65535),
            maximumBodySize: try int("RECEIVER_MAX_BODY_BYTES", default: 64 * 1024, in: 1024...(16 << 20)),
            storeTimeout: .milliseconds(storeMilliseconds),
            concurrentCommits: try int("RECEIVER_CONCURRENT_COMMITS", default: EventLog.defaultConcurrentCommits, in: 1...256),
            timeouts: timeouts,
            clientAddresses: ClientAddressResolver(trustedProxies: try trustedProxies())
        )
    }

    /// The HTTP listeners' timeouts (public and admin port): `HTTP_IDLE_TIMEOUT_SECONDS` (default 75) and
    /// `HTTP_REQUEST_TIMEOUT_SECONDS` (default 15).
    package func httpTimeouts() throws(SettingsError) -> HTTPTimeouts {
        HTTPTimeouts(
            idle: .seconds(try int("HTTP_IDLE_TIMEOUT_SECONDS", default: 75, in: 1...86_400)),
            request: .seconds(try int("HTTP_REQUEST_TIMEOUT_SECONDS", default: 15, in: 1...3_600))
        )
    }
}
