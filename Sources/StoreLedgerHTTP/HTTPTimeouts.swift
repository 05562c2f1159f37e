/// How long the HTTP listeners (the public port and the admin port) wait for clients, so that idle or dripping
/// connections cannot be held open forever.
///
/// Environment keys (read by the `storeledger` command): `HTTP_IDLE_TIMEOUT_SECONDS` (default 75),
/// `HTTP_REQUEST_TIMEOUT_SECONDS` (default 15).
package struct HTTPTimeouts: Sendable, Equatable {
    /// How long a connection may sit with no request in progress (before its first request, or between requests on a
    /// keep-alive connection) before it is closed. Default 75 s: longer than the 60 s idle timeout of common load
    /// balancers, so that they, not we, close a pooled connection (closing first makes them fail a request with 502).
    /// Hummingbird's HTTP/1 `idleTimeout` enforces it.
    package var idle: Duration
    /// How long a request may take to arrive in full, head and body, from its first byte. Past it the connection is
    /// answered `request_timeout` (503 on the public port, 408 on the admin port) when nothing has been answered on it yet (or simply closed, when the head has not
    /// arrived) and closed; a route still reading the body sees an error, never a cut-off body. Default 15 s, ample
    /// for a 64 KiB notification or an app's request on a slow mobile link. It does not limit how long the answer
    /// takes (`RECEIVER_STORE_TIMEOUT_MS` does that for the receiver).
    package var request: Duration

    /// Creates the settings.
    package init(idle: Duration = .seconds(75), request: Duration = .seconds(15)) {
        self.idle = idle
        self.request = request
    }
}
