package import Hummingbird
package import Logging
import NIOCore
package import PostgresNIO
package import Prometheus
package import StoreLedgerStore

/// The admin port (`ADMIN_PORT`): Prometheus `/metrics` and the health checks, kept off the public port so
/// metrics never leak to the internet (on the public port `/metrics` is a 404).
package enum AdminApplication {
    /// The admin router: `GET /metrics` (Prometheus text format 0.0.4), `GET /healthz`, `GET /readyz` (with
    /// `readinessAllowsAhead`, ready on a schema ahead of the build: ``HealthController/allowingAhead``), and the web
    /// console under `/console` when `console` is given (`CONSOLE=on`; every `/console` path is a 404 otherwise).
    /// `readinessTimeout` bounds the readiness check (default 2 s).
    package static func router(
        registry: PrometheusCollectorRegistry, client: PostgresClient, migrator: Migrator, console: ConsoleController? = nil,
        readinessAllowsAhead: Bool = false, readinessTimeout: Duration = .seconds(2)
    ) -> Router<StoreLedgerRequestContext> {
        let router = Router(context: StoreLedgerRequestContext.self)
        router.get("/metrics") { _, _ in
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes))
            )
        }
        HealthController(client: client, migrator: migrator, timeout: readinessTimeout, allowingAhead: readinessAllowsAhead).addRoutes(to: router)
        console?.addRoutes(to: router)
        router.add(middleware: MethodNotAllowedMiddleware(routes: router.routes))
        return router
    }

    /// The admin server as a service to run beside the process's others, enforcing `timeouts` like the public port; with
    /// `console`, it serves the web console too.
    package static func service(
        host: String, port: Int, registry: PrometheusCollectorRegistry, client: PostgresClient, migrator: Migrator,
        timeouts: HTTPTimeouts = HTTPTimeouts(), console: ConsoleController? = nil, readinessAllowsAhead: Bool = false, logger: Logger
    ) -> some ApplicationProtocol {
        Application(
            router: router(registry: registry, client: client, migrator: migrator, console: console, readinessAllowsAhead: readinessAllowsAhead),
            server: .http1(timeouts: timeouts, logger: logger),
            configuration: .init(address: .hostname(host, port: port), serverName: "storeledger-admin"),
            services: console.map { [$0.refresher] } ?? [],
            logger: logger
        )
    }
}
