public import Logging
public import PostgresNIO

extension PostgresClient {
    /// Runs `body` in a transaction, like `withTransaction`, but rethrows the body's own error
    /// unwrapped (PostgresNIO wraps it in `PostgresTransactionError`), so callers can match on it.
    public func inTransaction<Result: Sendable>(
        logger: Logger,
        _ body: (PostgresConnection) async throws -> sending Result
    ) async throws -> Result {
        do {
            return try await withTransaction(logger: logger, body)
        } catch let error as PostgresTransactionError {
            if let closureError = error.closureError, error.rollbackError == nil { throw closureError }
            throw error
        }
    }
}
