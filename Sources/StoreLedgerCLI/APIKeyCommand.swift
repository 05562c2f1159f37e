import ArgumentParser
import Logging
import StoreLedgerStore

/// `storeledger api-key create NAME` / `revoke NAME`: server-to-server keys for the app-facing API.
struct APIKeyCommand: AsyncParsableCommand {
    /// The command's name and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "api-key",
        abstract: "Create or revoke server-to-server API keys (stored as SHA-256; the key is shown once).",
        subcommands: [Create.self, Revoke.self]
    )

    /// `api-key create NAME`.
    struct Create: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "Create a key and print it (once).")

        @Argument(help: "A unique name for the key's holder, e.g. billing-backend.")
        var name: String

        @Option(help: "The web console role a sign-in with this key gets: viewer (default) or operator.")
        var consoleRole: String = "viewer"

        /// Checks the name and the console role.
        func validate() throws {
            guard APIKeyStore.isValidName(name) else {
                throw ValidationError("'\(name)' is not a valid key name (1 to 100 characters, no control characters, not only spaces)")
            }
            guard ConsoleRole(rawValue: consoleRole) != nil else { throw ValidationError("--console-role must be viewer or operator") }
        }

        /// Creates the key and prints it.
        func run() async throws {
            let key = try await Bootstrap.withDatabase("storeledger.api-key") { client, logger in
                try await APIKeyStore(client: client).create(name: name, consoleRole: ConsoleRole(rawValue: consoleRole) ?? .viewer, logger: logger)
            }
            guard let key else {
                throw CommandFailure(
                    "a key named \(name) exists (names stay taken after a revoke): choose another name; if an earlier create of "
                        + "this name ended without printing its key (a lost connection), that one made it: revoke it "
                        + "(storeledger api-key revoke \(name)) and create the key under a new name")
            }
            print(key)
        }
    }

    /// `api-key revoke NAME`.
    struct Revoke: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "Revoke the key with this name.")

        @Argument(help: "The key's name.")
        var name: String

        /// Revokes the key; exits non-zero when there was none.
        func run() async throws {
            let revoked = try await Bootstrap.withDatabase("storeledger.api-key") { client, logger in
                try await APIKeyStore(client: client).revoke(name: name, logger: logger)
            }
            guard revoked else { throw CommandFailure("no unrevoked key named \(name)") }
            print("revoked \(name)")
        }
    }
}
