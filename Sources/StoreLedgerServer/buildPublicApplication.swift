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
    let settings = Settings(reader: reader)
    let appAPI = try await buildAppAPI(reader: reader, context: context, verifiers: { try settings.verifiers() })
    return buildReceiverApplication(
        client: context.client, migrator: context.migrator, configuration: try settings.receiver(), appAPI: appAPI,
        services: services, sessions: context.sessions, logger: context.logger
    )
}

/// Builds the whole `storeledger serve` process as one application: the public port with the admin port
/// (``buildAdminApplication(reader:context:defaultPort:)``, default 9090) as its service.
package func buildServeApplication(reader: ConfigReader, context: ServerContext) async throws -> some ApplicationProtocol {
    let admin = try buildAdminApplication(reader: reader, context: context, defaultPort: 9090, console: true)
    return try await buildPublicApplication(reader: reader, context: context, services: admin.map { [$0] } ?? [])
}
