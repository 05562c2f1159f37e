import Foundation
package import Logging
package import StoreLedgerStore

extension Settings {
    /// `LOG_LEVEL` (trace, debug, info, notice, warning, error, critical; default info).
    package func logLevel() throws(SettingsError) -> Logger.Level {
        guard let text = string("LOG_LEVEL") else { return .info }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw SettingsError(
                .malformed, "LOG_LEVEL=\(text) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))", key: "LOG_LEVEL")
        }
        return level
    }

    /// How log lines are written: `LOG_FORMAT`.
    package enum LogFormat: String, Sendable, CaseIterable {
        /// Human-readable lines (the default).
        case text
        /// One JSON object per line.
        case json
    }

    /// `LOG_FORMAT`: `text` (default) or `json`.
    package func logFormat() throws(SettingsError) -> LogFormat {
        guard let text = string("LOG_FORMAT") else { return .text }
        guard let format = LogFormat(rawValue: text.lowercased()) else {
            throw SettingsError(.malformed, "LOG_FORMAT=\(text) is not text or json", key: "LOG_FORMAT")
        }
        return format
    }

    /// `SHUTDOWN_TIMEOUT_SECONDS` (default 10): how long graceful shutdown may last before cancellation.
    package func shutdownTimeout() throws(SettingsError) -> Duration {
        .seconds(try int("SHUTDOWN_TIMEOUT_SECONDS", default: 10, in: 1...3600))
    }

    /// `DATABASE_URL`, required.
    package func databaseURL() throws(SettingsError) -> DatabaseURL {
        let text = try required(
            "DATABASE_URL", "e.g. postgres://user:password@localhost:5432/storeledger; `scripts/dev` starts a local database for you"
        )
        do {
            return try DatabaseURL(text)
        } catch {
            throw malformed("DATABASE_URL", error)
        }
    }

    /// `DATABASE_POOLER`: `none` (default: a direct connection), `session` or `transaction` (what PgBouncer's
    /// `pool_mode` is); see ``DatabasePooler``.
    package func databasePooler() throws(SettingsError) -> DatabasePooler {
        guard let text = string("DATABASE_POOLER") else { return .direct }
        do {
            return try DatabasePooler(configurationValue: text)
        } catch {
            throw malformed("DATABASE_POOLER", error)
        }
    }

    /// `DATABASE_LISTEN_URL`: a direct (not transaction-pooled) connection the worker LISTENs on; nil when unset.
    package func databaseListenURL() throws(SettingsError) -> DatabaseURL? {
        guard let text = string("DATABASE_LISTEN_URL") else { return nil }
        do {
            return try DatabaseURL(text, key: "DATABASE_LISTEN_URL")
        } catch {
            throw malformed("DATABASE_LISTEN_URL", error)
        }
    }

    /// `DATABASE_MAX_CONNECTIONS` (default 20).
    package func maximumConnections() throws(SettingsError) -> Int {
        try int("DATABASE_MAX_CONNECTIONS", default: 20, in: 1...1000)
    }

    /// `FACT_CACHE_SIZE` (default 20,000; 0 keeps none): how many decoded facts a projecting process keeps.
    package func factCacheSize() throws(SettingsError) -> Int {
        try int("FACT_CACHE_SIZE", default: DecodedFactCache.defaultCapacity, in: 0...10_000_000)
    }

    /// The admin port (`/metrics`, `/healthz`, `/readyz`): `ADMIN_HOST` (default `defaultHost`: every interface, loopback
    /// for `dev`) and `ADMIN_PORT` (default `defaultPort`; `off` disables it). Nil when disabled.
    package func admin(defaultPort: Int, defaultHost: String = "0.0.0.0") throws(SettingsError) -> (host: String, port: Int)? {
        if string("ADMIN_PORT")?.lowercased() == "off" { return nil }
        return (string("ADMIN_HOST") ?? defaultHost, try int("ADMIN_PORT", default: defaultPort, in: 0...65535))
    }
}
