import ArgumentParser
import Configuration
import Foundation
import Logging
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerWorker

/// The process configuration, read from environment variables through swift-configuration.
///
/// Values that are present but malformed are errors naming the key, never silently replaced by
/// a default.
struct Environment: Sendable {
    let reader: ConfigReader

    /// Reads the process environment (or `variables`, for tests).
    init(variables: [String: String]? = nil) {
        let provider = variables.map { EnvironmentVariablesProvider(environmentVariables: $0) } ?? EnvironmentVariablesProvider()
        self.reader = ConfigReader(provider: provider)
    }

    /// A string value, or nil when unset or empty.
    func string(_ key: String) -> String? {
        reader.string(forKey: ConfigKey(key.lowercased().split(separator: "_").map(String.init)))
            .flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An integer in `range`, `defaultValue` when unset.
    func int(_ key: String, default defaultValue: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = string(key) else { return defaultValue }
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(value) else {
            throw ValidationError("\(key)=\(text) is not a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// `DATABASE_URL`, required.
    func databaseURL() throws -> DatabaseURL {
        guard let text = string("DATABASE_URL") else {
            throw ValidationError("DATABASE_URL is not set (e.g. postgres://user:password@localhost:5432/storeledger); `scripts/dev` starts a local database for you")
        }
        do {
            return try DatabaseURL(text)
        } catch let error as StoreError {
            throw ValidationError(error.detail)
        }
    }

    /// `LOG_LEVEL` (trace, debug, info, notice, warning, error, critical; default info).
    func logLevel() throws -> Logger.Level {
        guard let text = string("LOG_LEVEL") else { return .info }
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError("LOG_LEVEL=\(text) is not one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return level
    }

    /// `DATABASE_MAX_CONNECTIONS` (default 20).
    func maximumConnections() throws -> Int {
        try int("DATABASE_MAX_CONNECTIONS", default: 20, in: 1...1000)
    }

    /// The receiver's settings: `HOST`, `PORT`, `RECEIVER_MAX_BODY_BYTES`, `RECEIVER_STORE_TIMEOUT_MS`.
    func receiver() throws -> ReceiverConfiguration {
        ReceiverConfiguration(
            host: string("HOST") ?? "0.0.0.0",
            port: try int("PORT", default: 8080, in: 0...65535),
            maximumBodySize: try int("RECEIVER_MAX_BODY_BYTES", default: 64 * 1024, in: 1024...(16 << 20)),
            storeTimeout: .milliseconds(try int("RECEIVER_STORE_TIMEOUT_MS", default: 5000, in: 100...60000))
        )
    }

    /// The worker's settings: `WORKER_CONCURRENCY`, `WORKER_BATCH_SIZE`, `WORKER_LEASE_SECONDS`,
    /// `WORKER_POLL_SECONDS`, `WORKER_MAX_ATTEMPTS`.
    func worker() throws -> WorkerConfiguration {
        WorkerConfiguration(
            concurrency: try int("WORKER_CONCURRENCY", default: 2, in: 1...64),
            batchSize: try int("WORKER_BATCH_SIZE", default: 50, in: 1...1000),
            lease: .seconds(try int("WORKER_LEASE_SECONDS", default: 30, in: 1...3600)),
            pollInterval: .seconds(try int("WORKER_POLL_SECONDS", default: 2, in: 1...300)),
            retryPolicy: RetryPolicy(maximumAttempts: try int("WORKER_MAX_ATTEMPTS", default: 20, in: 1...100))
        )
    }
}
