import ArgumentParser
import Foundation
import Logging
import StoreLedgerHTTP
import StoreLedgerStore

/// `storeledger console-user create NAME --role viewer|operator` / `list` / `delete NAME`: the web console's users
/// (passwords hashed with PBKDF2-SHA256, never stored in clear).
struct ConsoleUserCommand: AsyncParsableCommand {
    /// The command's name and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "console-user",
        abstract: "Create, list or delete web console users (CONSOLE=on).",
        subcommands: [Create.self, List.self, Delete.self]
    )

    /// `console-user create NAME --role viewer|operator [--password-stdin] [--replace]`.
    struct Create: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(
            abstract: "Create a user; the password is read from standard input (its first line).",
            discussion: "Example: printf '%s\\n' \"$PASSWORD\" | storeledger console-user create alice --role operator"
        )

        @Argument(help: "The sign-in name (letters, digits, '.', '_', '@', '-'; at most 64).")
        var name: String

        @Option(help: "viewer (reads every page) or operator (also requeues and replays events).")
        var role: String = "viewer"

        @Flag(help: "Read the password from standard input (the default; accepted for scripts that say so).")
        var passwordStdin = false

        @Flag(help: "Replace an existing user's role and password (and sign out its sessions).")
        var replace = false

        /// Checks the name and role.
        func validate() throws {
            guard ConsoleUserStore.isValidName(name) else {
                throw ValidationError(
                    "'\(name)' is not a valid user name (letters, digits, '.', '_', '@', '-'; at most 64; not \(ConsoleUserStore.adminKeyPrincipal))")
            }
            guard ConsoleRole(rawValue: role) != nil else { throw ValidationError("--role must be viewer or operator") }
        }

        /// Reads the password, hashes it and stores the user.
        func run() async throws {
            guard let line = readLine(strippingNewline: true) else { throw ValidationError("no password on standard input") }
            let hash: String
            do {
                hash = try ConsolePassword.hash(line)
            } catch {
                throw ValidationError(error.detail)
            }
            let role = ConsoleRole(rawValue: role) ?? .viewer
            let created = try await Bootstrap.withDatabase("storeledger.console-user") { client, logger in
                try await ConsoleUserStore(client: client).create(name: name, role: role, passwordHash: hash, replace: replace, logger: logger)
            }
            guard created else { throw CommandFailure("a console user named \(name) exists (use --replace to change it)") }
            print("console user \(name) (\(role.rawValue)) \(replace ? "saved" : "created")")
        }
    }

    /// `console-user list`.
    struct List: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "List users with their roles.")

        /// Prints one user per line: name, role, created.
        func run() async throws {
            let users = try await Bootstrap.withDatabase("storeledger.console-user") { client, logger in
                try await ConsoleUserStore(client: client).list(logger: logger)
            }
            let formatter = ISO8601DateFormatter()
            for user in users { print("\(user.name)\t\(user.role.rawValue)\t\(formatter.string(from: user.createdAt))") }
        }
    }

    /// `console-user delete NAME`.
    struct Delete: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "Delete a user and end its sessions.")

        @Argument(help: "The user's name.")
        var name: String

        /// Deletes the user; exits non-zero when there was none.
        func run() async throws {
            let deleted = try await Bootstrap.withDatabase("storeledger.console-user") { client, logger in
                try await ConsoleUserStore(client: client).delete(name: name, logger: logger)
            }
            guard deleted else { throw CommandFailure("no console user named \(name)") }
            print("deleted \(name)")
        }
    }
}
