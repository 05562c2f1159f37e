import ArgumentParser
import StoreLedgerHTTP

/// Reads the web console's settings (`CONSOLE`, `CONSOLE_SESSION_HOURS`, and `ADMIN_API_KEY` for the API-key sign-in).
enum ConsoleSettings {
    /// The console's configuration from `environment`; a malformed value stops the command naming the key.
    static func read(_ environment: Environment) throws -> ConsoleConfiguration {
        do {
            return try ConsoleConfiguration(reading: { environment.string($0) }, adminAPIKey: environment.authentication().adminAPIKey)
        } catch {
            throw ValidationError(error.detail)
        }
    }
}
