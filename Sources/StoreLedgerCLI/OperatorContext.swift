import ArgumentParser
import Foundation
import Logging
import NIOCore
import StoreLedgerStore
import StoreLedgerVerification

/// Set-up shared by the operator commands.
enum OperatorContext {
    /// The operator commands' logger (warnings and up, so output stays readable).
    static var logger: Logger {
        var logger = Logger(label: "storeledger.operator")
        logger.logLevel = .warning
        return logger
    }

    /// Runs `body` with an operator store over the configured database.
    static func run(_ name: String, _ body: @Sendable (OperatorStore) async throws -> Void) async throws {
        try await Bootstrap.withDatabase("storeledger.\(name)", level: .warning) { client, _ in try await body(OperatorStore(client: client)) }
    }
}
