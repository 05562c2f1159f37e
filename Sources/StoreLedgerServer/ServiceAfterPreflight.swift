package import ServiceLifecycle

/// A service that starts once `preflight` has passed: the schema check in `work`, the one migration in `dev` (which
/// runs beside the services, so that none of them reads a table that does not exist yet). A throw from `preflight`
/// ends the service, and with it the process, as the service's own would.
package struct ServiceAfterPreflight: Service, CustomStringConvertible {
    /// The service it starts.
    package let service: any Service
    /// What must pass first.
    package let preflight: @Sendable () async throws -> Void

    /// Wraps `service` to start after `preflight`.
    package init(_ service: any Service, after preflight: @escaping @Sendable () async throws -> Void) {
        self.service = service
        self.preflight = preflight
    }

    /// Awaits `preflight`, then runs the service.
    package func run() async throws {
        try await preflight()
        try await service.run()
    }

    /// The wrapped service's description, so that the service group's logs name it.
    package var description: String { String(describing: service) }
}
