package import StoreLedgerHTTP

extension Settings {
    /// The web console's settings: `CONSOLE`, `CONSOLE_SESSION_HOURS`, `CONSOLE_CHART_REFRESH_MINUTES`, and
    /// `ADMIN_API_KEY` for the API-key sign-in; a malformed value is an error naming its key.
    package func console() throws(SettingsError) -> ConsoleConfiguration {
        let adminAPIKey = try authentication().adminAPIKey
        do {
            return try ConsoleConfiguration(reading: { string($0) }, adminAPIKey: adminAPIKey)
        } catch {
            let key = String(error.detail.prefix { $0 != "=" })
            throw SettingsError(.malformed, error.detail, key: key)
        }
    }
}
