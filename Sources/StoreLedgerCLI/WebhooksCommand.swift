import ArgumentParser
import Logging
import StoreLedgerStore

/// `storeledger webhooks add URL | list | retry URL | remove URL`: where entitlement events are delivered.
struct WebhooksCommand: AsyncParsableCommand {
    /// The command's name and subcommands.
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Manage outgoing webhook endpoints (events signed with HMAC-SHA256; see docs/webhooks.md).",
        subcommands: [Add.self, List.self, Retry.self, Remove.self]
    )

    /// `webhooks add URL`.
    struct Add: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "Add an endpoint and print its signing secret (once).")

        @Argument(help: "The http(s) URL to POST events to.")
        var url: String

        @Flag(help: "Give an endpoint that is already active a new secret (its consumer must switch to it).")
        var rotateSecret = false

        /// Adds the endpoint.
        func run() async throws {
            try await WebhooksCommand.withEndpoints { endpoints, logger in
                guard let secret = try await endpoints.add(url: url, rotatingSecret: rotateSecret, logger: logger) else {
                    throw CommandFailure(
                        "\(url) is already an active endpoint: its secret stays (pass --rotate-secret for a new one, which its consumer must then use)"
                    )
                }
                print(secret)
            }
        }
    }

    /// `webhooks list`.
    struct List: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "List endpoints with pending and failed deliveries.")

        /// Prints one line per endpoint.
        func run() async throws {
            try await WebhooksCommand.withEndpoints { endpoints, logger in
                for endpoint in try await endpoints.list(logger: logger) {
                    print(
                        "\(endpoint.id)\t\(endpoint.active ? "active" : "removed")\t\(endpoint.pending) pending\t\(endpoint.failed) failed\t\(endpoint.url)"
                    )
                }
            }
        }
    }

    /// `webhooks retry URL`.
    struct Retry: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(
            abstract: "Deliver an endpoint's failed deliveries again, from now, with a new series of attempts (its consumer is back).")

        @Argument(help: "The active endpoint's URL.")
        var url: String

        /// Makes the endpoint's failed deliveries due again.
        func run() async throws {
            try await WebhooksCommand.withEndpoints { endpoints, logger in
                guard let retried = try await endpoints.retryFailed(url: url, logger: logger) else {
                    throw CommandFailure("no active endpoint \(url)")
                }
                print("\(retried) failed deliveries to \(url) are due again")
            }
        }
    }

    /// `webhooks remove URL`.
    struct Remove: AsyncParsableCommand {
        /// The subcommand's help.
        static let configuration = CommandConfiguration(abstract: "Stop delivering to an endpoint (its history stays).")

        @Argument(help: "The endpoint's URL.")
        var url: String

        /// Deactivates the endpoint.
        func run() async throws {
            try await WebhooksCommand.withEndpoints { endpoints, logger in
                guard try await endpoints.remove(url: url, logger: logger) else { throw CommandFailure("no active endpoint \(url)") }
                print("removed \(url)")
            }
        }
    }

    /// Runs `body` with the endpoints helper over the configured database.
    static func withEndpoints(_ body: @Sendable (WebhookEndpoints, Logger) async throws -> Void) async throws {
        try await Bootstrap.withDatabase("storeledger.webhooks") { client, logger in try await body(WebhookEndpoints(client: client), logger) }
    }
}
