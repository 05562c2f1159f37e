import Foundation
package import Logging
import NIOCore
import NIOSSL
package import PostgresNIO

extension DatabaseURL {
    /// A single connection's configuration for this URL (no pool), with the same TLS, timeout and startup
    /// parameters as ``clientConfiguration(maximumConnections:)``.
    package func connectionConfiguration(connectTimeout: Duration = .seconds(5)) throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            let tls: PostgresConnection.Configuration.TLS
            switch tlsUse {
            case .disable: tls = .disable
            case .prefer(let tlsConfiguration): tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            case .require(let tlsConfiguration): tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls
            )
        }
        configuration.options.connectTimeout = TimeAmount(connectTimeout)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// Connects once, runs `SELECT 1` and disconnects, all within `timeout`, so a process that cannot use its
    /// database says why at start instead of retrying in its pool until `connectionCreationCircuitBreakerTripped`.
    ///
    /// Throws ``StoreError/Code/unavailable`` whose detail names the target and the cause: the server's or the
    /// pooler's refusal (`unsupported startup parameter: …`, `password authentication failed …`, `no such database`),
    /// `connection refused`, a TLS failure, or no answer in time. The full error is logged with
    /// `String(reflecting:)`.
    package func checkConnection(timeout: Duration = .seconds(10), logger: Logger) async throws {
        let configuration: PostgresConnection.Configuration
        do {
            configuration = try connectionConfiguration()
        } catch {
            throw StoreError.configuration("cannot set up TLS for \(self): \(error)")
        }
        try await Self.checkConnection(configuration, target: description, timeout: timeout, logger: logger)
    }

    /// ``checkConnection(timeout:logger:)`` for a given connection configuration; `target` names it in the error.
    package static func checkConnection(
        _ configuration: PostgresConnection.Configuration, target: String, timeout: Duration, logger: Logger
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        var configuration = configuration
        configuration.options.connectTimeout = TimeAmount(timeout)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            // Behind a pooler the login may succeed at the pooler and fail only when it opens the server connection
            // for the first statement; a hung server must not hang the check either. The connection is closed (and
            // that awaited, as PostgresNIO requires) whatever happens.
            let answered: Result<Bool, any Error> = await withTaskGroup(of: Result<Bool, any Error>.self) { group in
                group.addTask {
                    do {
                        try await connection.query("SELECT 1", logger: logger).readToEnd()
                        return .success(true)
                    } catch {
                        return .failure(error)
                    }
                }
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    return .success(false)
                }
                let first = await group.next() ?? .success(false)
                group.cancelAll()
                try? await connection.close()
                return first
            }
            guard try answered.get() else { throw ConnectionCheckTimeout() }
        } catch {
            let cause = error is ConnectionCheckTimeout ? "no answer to SELECT 1 within \(timeout)" : failureCause(error)
            logger.error(
                "cannot connect to the database",
                metadata: [
                    "database": "\(target)", "cause": "\(cause)", "error": "\(String(reflecting: error))",
                ])
            throw StoreError(.unavailable, "cannot connect to \(target): \(cause)")
        }
    }

    /// One sentence naming why a connection attempt failed: the server's (or the pooler's) message, severity and
    /// SQLSTATE when it answered with an error, else what the network or TLS layer said.
    package static func failureCause(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(reflecting: error) }
        if let info = error.serverInfo, let message = info[.message] {
            var sentence = message
            if let detail = info[.detail] { sentence += " (\(detail))" }
            if let hint = info[.hint] { sentence += "; hint: \(hint)" }
            let severity = info[.severity] ?? info[.localizedSeverity]
            sentence += " (\([severity, info[.sqlState].map { "SQLSTATE \($0)" }].compactMap { $0 }.joined(separator: ", ")))"
            return sentence
        }
        switch error.code {
        case .sslUnsupported:
            return "the server does not offer TLS, and sslmode requires it"
        case .connectionError, .failedToAddSSLHandler:
            let underlying = error.underlying.map { String(describing: $0) } ?? String(reflecting: error)
            if underlying.localizedCaseInsensitiveContains("connection refused") {
                return "connection refused (nothing listens there): \(underlying)"
            }
            if underlying.localizedCaseInsensitiveContains("connectTimeout") || underlying.localizedCaseInsensitiveContains("timed out") {
                return "the connection was not established in time: \(underlying)"
            }
            return underlying
        case .serverClosedConnection, .uncleanShutdown:
            return "the server closed the connection during login: \(String(reflecting: error))"
        default:
            return String(reflecting: error)
        }
    }
}

/// The connection check's deadline passed.
private struct ConnectionCheckTimeout: Error {}
