import ArgumentParser
import Logging
import ServiceLifecycle
import StoreLedgerServer

/// `storeledger serve`: the receiver, a thin HTTP process that stores notifications, plus the app-facing API
/// when callers' authentication is configured.
struct ServeCommand: AsyncParsableCommand {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the receiver (store every App Store Server Notification, 200 after commit) and the app-facing API.",
        discussion: """
            The app-facing routes are served when AUTH_JWT_SECRET, AUTH_JWT_PUBLIC_KEY or ADMIN_API_KEY is set, or when \
            the App Store Server API's credentials are (APPSTORE_ISSUER_ID, APPSTORE_KEY_ID, APPSTORE_PRIVATE_KEY) with \
            IAP_VALIDATE_ANONYMOUS on, its default: seed 002's validate for callers without credentials.
            """
    )

    /// Builds the `serve` application (``buildServeApplication(reader:context:)``) and runs it until SIGTERM.
    func run() async throws {
        let context = try await Bootstrap.serverContext("storeledger.receiver", listens: false)
        let app = try await buildServeApplication(reader: Bootstrap.reader, context: context)
        try await ServerProcess.serviceGroup([app], reader: Bootstrap.reader, logger: context.logger).run()
        context.logger.info("stopped")
    }
}
