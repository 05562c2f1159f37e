public import Configuration
public import Hummingbird
import Logging
import StoreLedgerHTTP

/// Builds the admin port's application (Prometheus `/metrics` from the context's registry, `/healthz`, `/readyz`)
/// from `ADMIN_HOST`, `ADMIN_PORT` (`defaultPort` when unset: 9090 for `serve` and `dev`, 9091 for `work`) and the
/// HTTP timeouts; nil when `ADMIN_PORT=off`. Run it as a service beside the process's others.
public func buildAdminApplication(reader: ConfigReader, context: ServerContext, defaultPort: Int) throws -> (any ApplicationProtocol)? {
    let settings = Settings(reader: reader)
    guard let (host, port) = try settings.admin(defaultPort: defaultPort) else {
        context.logger.notice("admin port disabled (ADMIN_PORT=off): no /metrics")
        return nil
    }
    context.logger.info("admin port: /metrics, /healthz, /readyz", metadata: ["address": "\(host):\(port)"])
    return AdminApplication.service(
        host: host, port: port, registry: context.metrics, client: context.client, migrator: context.migrator,
        timeouts: try settings.httpTimeouts(), logger: context.logger
    )
}
