import Configuration
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import StoreLedgerServer
import StoreLedgerStore
import StoreLedgerTestSupport
import Synchronization

/// Readers and contexts for building StoreLedgerServer's applications in tests, as the executable builds them.
enum ServerHarness {
    /// Records the key of every lookup made through a reader, in the README's spelling (`database.url` → `DATABASE_URL`).
    final class KeyRecorder: AccessReporter {
        private let keys = Mutex<Set<String>>([])

        /// The keys looked up so far.
        var all: Set<String> { keys.withLock { $0 } }

        /// Records one lookup.
        func report(_ event: AccessEvent) {
            let key = event.metadata.key.components.joined(separator: "_").uppercased()
            _ = keys.withLock { $0.insert(key) }
        }
    }

    /// A reader over `variables` (written as environment variables, `DATABASE_URL`), in memory, reporting to `recorder`.
    static func reader(_ variables: [String: String], recorder: KeyRecorder? = nil) -> ConfigReader {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, value) in variables {
            values[AbsoluteConfigKey(Settings.configKey(key).components, context: [:])] = .init(.string(value), isSecret: false)
        }
        return ConfigReader(provider: InMemoryProvider(name: "test", values: values), accessReporter: recorder)
    }

    /// Settings that build every part against `db` without binding a fixed port or touching the repository's `.local`;
    /// the receiver waits as long as it may for a loaded machine's commit (and its requests longer than that).
    static func baseVariables(_ db: TestDatabase) -> [String: String] {
        [
            "DATABASE_URL": db.url.connectionString, "PORT": "0", "ADMIN_PORT": "off", "APP_BUNDLE_ID": "com.example.app",
            "DATABASE_MAX_CONNECTIONS": "4", "RECEIVER_STORE_TIMEOUT_MS": "60000", "HTTP_REQUEST_TIMEOUT_SECONDS": "120",
        ]
    }

    /// A folder of its own under the temporary directory (for the development CA and secret).
    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storeledger-server-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// The services as they run once started: each ``ServiceAfterPreflight`` replaced by the service it starts.
    static func unwrapped(_ services: [any Service]) -> [any Service] {
        services.map { ($0 as? ServiceAfterPreflight)?.service ?? $0 }
    }

    /// Connects a context through `reader`, quietly.
    static func context(_ reader: ConfigReader) async throws -> ServerContext {
        try await ServerContext.connect(reader: reader, logger: TestDatabase.makeLogger("server"))
    }

    /// Builds every part a `storeledger` process can be made of through `reader`: the context, logging and the
    /// service group's settings, `serve` (public and admin), `work`'s services and `dev` (its CA and secret in
    /// `folder`). Nothing runs.
    static func buildEverything(_ reader: ConfigReader, folder: URL) async throws {
        _ = try ServerProcess.logHandlerFactory(reader: reader)
        let context = try await context(reader)
        _ = try ServerProcess.serviceGroup([], reader: reader, logger: context.logger)
        _ = try await buildServeApplication(reader: reader, context: context)
        _ = try await buildWorkerServices(reader: reader, context: context)
        _ = try await buildDevelopmentApplication(
            reader: reader, context: context, certificateAuthority: folder.appendingPathComponent("dev-ca"),
            authenticationSecretFile: folder.appendingPathComponent("dev-auth-secret")
        )
    }

    /// Runs `body` with `client` running (for parts that do not run it themselves, like the admin application).
    static func withRunning<Result: Sendable>(_ client: PostgresClient, _ body: @Sendable () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}
