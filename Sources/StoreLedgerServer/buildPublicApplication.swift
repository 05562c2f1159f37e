package import Configuration
package import Hummingbird
package import ServiceLifecycle
import StoreLedgerHTTP
import StoreLedgerProcessing

/// Builds the public port's application for `storeledger serve`: the receiver (`HOST`, `PORT`,
/// `RECEIVER_MAX_BODY_BYTES`, `RECEIVER_STORE_TIMEOUT_MS`, the HTTP timeouts) and, when callers' authentication is
/// configured, the app-facing API (``buildAppAPI(reader:context:verifiers:authentication:)``). It runs the context's
/// client and `services` (e.g. the admin application), and refuses to start when the schema is not current.
package func buildPublicApplication(
    reader: ConfigReader, context: ServerContext, services: [any Service] = []
) async throws -> some ApplicationProtocol {
    try await buildPublicApplication(reader: reader, context: context) { _ in services }
}

/// Builds the whole `storeledger serve` process as one application: the public port with the admin port
/// (``buildAdminApplication(reader:context:defaultPort:console:readinessAllowsAhead:)``, default 9090) as its service,
/// whose `/readyz` follows the public port's rule for a schema ahead of the build.
package func buildServeApplication(reader: ConfigReader, context: ServerContext) async throws -> some ApplicationProtocol {
    try await buildPublicApplication(reader: reader, context: context) { servesAppAPI in
        try buildAdminApplication(reader: reader, context: context, defaultPort: 9090, console: true, readinessAllowsAhead: !servesAppAPI)
            .map { [$0] } ?? []
    }
}

/// The public port's application, with the services `services(servesAppAPI)` gives, told whether the app-facing
/// API is served (which decides whether a schema ahead of the build keeps the process ready).
private func buildPublicApplication(
    reader: ConfigReader, context: ServerContext, services: (_ servesAppAPI: Bool) throws -> [any Service]
) async throws -> some ApplicationProtocol {
    let settings = Settings(reader: reader)
    let appAPI = try await buildAppAPI(reader: reader, context: context, verifiers: { try settings.verifiers() })
    return buildReceiverApplication(
        client: context.client, migrator: context.migrator, configuration: try settings.receiver(), appAPI: appAPI,
        services: try services(appAPI != nil), sessions: context.sessions, logger: context.logger
    )
}
