import Foundation

/// The web console's settings.
///
/// Environment keys (read by the `storeledger` command): `CONSOLE` (`on` or `off`, default `off`) and
/// `CONSOLE_SESSION_HOURS` (1...720, default 12) and `CONSOLE_CHART_REFRESH_MINUTES` (1...1440, default 10). The
/// console is served on the admin listener only
/// (`ADMIN_HOST`/`ADMIN_PORT`), under `/console`; `ADMIN_API_KEY`, when set, also signs in (as a viewer).
package struct ConsoleConfiguration: Sendable, Equatable {
    /// Whether `/console` is served.
    package var enabled: Bool
    /// How long a session lasts, in seconds.
    package var sessionLifetime: Double
    /// The `ADMIN_API_KEY`, accepted on the sign-in page with the viewer role.
    package var adminAPIKey: String?
    /// How often the charts' snapshots are retaken in the background, in minutes.
    package var chartRefreshMinutes: Int

    /// Creates a configuration.
    package init(enabled: Bool, sessionHours: Int = 12, adminAPIKey: String? = nil, chartRefreshMinutes: Int = 10) {
        self.enabled = enabled
        self.sessionLifetime = Double(sessionHours) * 3_600
        self.adminAPIKey = adminAPIKey
        self.chartRefreshMinutes = chartRefreshMinutes
    }

    /// The console switched off.
    package static let off = ConsoleConfiguration(enabled: false)

    /// Reads `CONSOLE`, `CONSOLE_SESSION_HOURS` and `CONSOLE_CHART_REFRESH_MINUTES` through `value` (a lookup of a configuration key, nil when unset
    /// or empty); a malformed value is an error naming the key.
    package init(reading value: (String) -> String?, adminAPIKey: String? = nil) throws(ConsoleError) {
        let enabled: Bool
        switch value("CONSOLE")?.trimmingCharacters(in: .whitespaces).lowercased() {
        case nil, "off", "false", "0", "no": enabled = false
        case "on", "true", "1", "yes": enabled = true
        case let other?: throw ConsoleError(.configuration, "CONSOLE=\(other) is not on or off")
        }
        var hours = 12
        if let text = value("CONSOLE_SESSION_HOURS") {
            guard let parsed = Int(text.trimmingCharacters(in: .whitespaces)), (1...720).contains(parsed) else {
                throw ConsoleError(.configuration, "CONSOLE_SESSION_HOURS=\(text) is not a whole number in 1...720")
            }
            hours = parsed
        }
        var minutes = 10
        if let text = value("CONSOLE_CHART_REFRESH_MINUTES") {
            guard let parsed = Int(text.trimmingCharacters(in: .whitespaces)), (1...1_440).contains(parsed) else {
                throw ConsoleError(.configuration, "CONSOLE_CHART_REFRESH_MINUTES=\(text) is not a whole number in 1...1440")
            }
            minutes = parsed
        }
        self.init(enabled: enabled, sessionHours: hours, adminAPIKey: adminAPIKey, chartRefreshMinutes: minutes)
    }
}
