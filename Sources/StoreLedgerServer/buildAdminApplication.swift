package import Configuration
package import Hummingbird
import Logging
import StoreLedgerHTTP

/// Builds the admin port's application (Prometheus `/metrics` from the context's registry, `/healthz`, `/readyz`)
/// from `ADMIN_HOST`, `ADMIN_PORT` (`defaultPort` when unset: 9090 for `serve` and `dev`, 9091 for `work`) and the
/// HTTP timeouts; nil when `ADMIN_PORT=off`. Run it as a service beside the process's others. With `console`
/// (`serve` and `dev`; never a worker), the web console is served on it too when `CONSOLE=on` (``Settings/console()``).
/// With `readinessAllowsAhead` (a receiver without the app-facing API), `/readyz` stays 200 on a schema ahead of the
/// build, as the public port's does. `defaultHost` is where it listens without `ADMIN_HOST`.
package func buildAdminApplication(
    reader: ConfigReader, context: ServerContext, defaultPort: Int, defaultHost: String = "0.0.0.0", console: Bool = false,
    readinessAllowsAhead: Bool = false
) throws -> (any ApplicationProtocol)? {
    let settings = Settings(reader: reader)
    guard let (host, port) = try settings.admin(defaultPort: defaultPort, defaultHost: defaultHost) else {
        context.logger.notice("admin port disabled (ADMIN_PORT=off): no /metrics")
        return nil
    }
    context.logger.info("admin port: /metrics, /healthz, /readyz", metadata: ["address": "\(host):\(port)"])
    // The web console: on this listener only, under /console.
    let consoleConfiguration = console ? try settings.console() : .off
    var consoleController = consoleConfiguration.enabled ? try ConsoleController(configuration: consoleConfiguration, client: context.client) : nil
    // Sign-in attempts are counted per client: behind the TLS proxy docs/console.md recommends, its X-Forwarded-For.
    consoleController?.clientAddresses = ClientAddressResolver(trustedProxies: try settings.trustedProxies())
    if consoleController != nil {
        context.logger.notice("web console on the admin port", metadata: ["url": "http://\(host):\(port)/console"])
    }
    return AdminApplication.service(
        host: host, port: port, registry: context.metrics, client: context.client, migrator: context.migrator,
        timeouts: try settings.httpTimeouts(), console: consoleController, readinessAllowsAhead: readinessAllowsAhead, logger: context.logger
    )
}
