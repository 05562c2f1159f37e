import Foundation
import NIOSSL
package import PostgresNIO

/// A parsed `DATABASE_URL`, as libpq and Heroku write it.
///
/// Accepts `postgres://` and `postgresql://` URLs with user, password, host, port, database and the
/// query parameters `sslmode` (`disable`, `allow`, `prefer` (default), `require`, `verify-ca`,
/// `verify-full`), `host` (a unix-socket folder, or the socket file itself) and `application_name`.
package struct DatabaseURL: Sendable, CustomStringConvertible {
    /// The libpq `sslmode` values.
    package enum SSLMode: String, Sendable, CaseIterable {
        /// Never use TLS.
        case disable
        /// Libpq tries plain first; we treat it like `prefer`.
        case allow
        /// Use TLS when the server offers it, without verifying the certificate.
        case prefer
        /// Require TLS, without verifying the certificate (libpq semantics).
        case require
        /// Require TLS and a certificate signed by a trusted CA.
        case verifyCA = "verify-ca"
        /// Require TLS, a trusted certificate, and a matching host name.
        case verifyFull = "verify-full"
    }

    /// Host name or address for TCP connections; nil when connecting over a unix socket.
    package var host: String?
    /// TCP port.
    package var port: Int
    /// Full path of the unix socket file, when connecting over a unix socket.
    package var unixSocketPath: String?
    /// User name.
    package var username: String
    /// Password, if any.
    package var password: String?
    /// Database name.
    package var database: String?
    /// TLS mode.
    package var sslMode: SSLMode
    /// `application_name` reported to the server.
    package var applicationName: String?

    /// Whether the server is on this machine: a unix socket, `localhost`, or a loopback address (127.0.0.0/8, `::1`).
    package var isOnThisMachine: Bool {
        guard unixSocketPath == nil, let host = host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]")) else { return true }
        if host == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        return octets.count == 4 && !octets.contains(nil) && octets.first == 127
    }

    /// Parses `string`, throwing a ``StoreError`` that names what is wrong (and `key`, the setting it came from).
    package init(_ string: String, key: String = "DATABASE_URL") throws {
        guard let components = URLComponents(string: string),
            let scheme = components.scheme, ["postgres", "postgresql"].contains(scheme)
        else {
            throw StoreError.configuration("\(key) must look like postgres://user:password@host:5432/database")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }

        self.username = components.user?.removingPercentEncoding ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        self.password = components.password?.removingPercentEncoding
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        self.database = path.isEmpty ? nil : path.removingPercentEncoding
        if let portText = query["port"] ?? components.port.map(String.init) {
            guard let port = Int(portText), (1...65535).contains(port) else {
                throw StoreError.configuration("\(key) has an invalid port \(portText)")
            }
            self.port = port
        } else {
            self.port = 5432
        }
        if let modeText = query["sslmode"] {
            guard let mode = SSLMode(rawValue: modeText) else {
                let allowed = SSLMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw StoreError.configuration("\(key) sslmode '\(modeText)' is not one of \(allowed)")
            }
            self.sslMode = mode
        } else {
            self.sslMode = .prefer
        }
        self.applicationName = query["application_name"]

        let socketHost = query["host"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        let urlHost = components.host?.removingPercentEncoding.flatMap { $0.isEmpty ? nil : $0 }
        if let folderOrFile = socketHost ?? (urlHost?.hasPrefix("/") == true ? urlHost : nil) {
            // libpq names the folder; PostgresNIO wants the socket file itself.
            self.unixSocketPath = folderOrFile.contains(".s.PGSQL.") ? folderOrFile : "\(folderOrFile)/.s.PGSQL.\(port)"
            self.host = nil
        } else {
            self.host = query["host"] ?? urlHost ?? "localhost"
            self.unixSocketPath = nil
        }
    }

    /// The URL with its password masked, safe to log.
    package var description: String {
        let target = unixSocketPath ?? "\(host ?? "localhost"):\(port)"
        return "postgres://\(username)\(password == nil ? "" : ":***")@\(target)/\(database ?? "") (sslmode=\(sslMode.rawValue))"
    }

    /// A `PostgresClient` configuration for this URL; `maximumConnections` bounds the pool.
    package func clientConfiguration(maximumConnections: Int = 20) throws -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if let unixSocketPath {
            configuration = .init(unixSocketPath: unixSocketPath, username: username, password: password, database: database)
        } else {
            configuration = .init(
                host: host ?? "localhost", port: port, username: username, password: password, database: database,
                tls: tls()
            )
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.additionalStartupParameters = startupParameters
        return configuration
    }

    /// The startup parameters sent besides user and database: only `application_name`, which PgBouncer knows.
    /// Anything else (`plan_cache_mode`, `options`) a pooler refuses at login (`unsupported startup parameter`);
    /// session settings are made on the connection instead (see ``DatabasePooler``).
    var startupParameters: [(String, String)] {
        applicationName.map { [("application_name", $0)] } ?? []
    }

    /// How TLS is used, and the configuration it is used with (nil for `disable`).
    enum TLSUse {
        /// No TLS.
        case disable
        /// TLS when the server offers it.
        case prefer(TLSConfiguration)
        /// TLS or no connection.
        case require(TLSConfiguration)
    }

    /// The TLS use `sslmode` asks for, with libpq's meaning of each mode.
    var tlsUse: TLSUse {
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        switch sslMode {
        case .disable:
            return .disable
        case .allow, .prefer:
            tlsConfiguration.certificateVerification = .none
            return .prefer(tlsConfiguration)
        case .require:
            tlsConfiguration.certificateVerification = .none
            return .require(tlsConfiguration)
        case .verifyCA:
            tlsConfiguration.certificateVerification = .noHostnameVerification
            return .require(tlsConfiguration)
        case .verifyFull:
            tlsConfiguration.certificateVerification = .fullVerification
            return .require(tlsConfiguration)
        }
    }

    private func tls() -> PostgresClient.Configuration.TLS {
        switch tlsUse {
        case .disable: .disable
        case .prefer(let configuration): .prefer(configuration)
        case .require(let configuration): .require(configuration)
        }
    }
}
