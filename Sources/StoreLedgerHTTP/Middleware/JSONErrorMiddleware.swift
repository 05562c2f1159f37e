package import Hummingbird
import Logging
import PostgresNIO
import StoreLedgerStore

/// Makes every error answer JSON `{error, code}`: Hummingbird's own errors (unknown route, wrong method) get a
/// stable code, a text the database refuses (a NUL character) is 400 `invalid_request`, and anything
/// unexpected is logged with its detail and answered without it — 503 `storage_unavailable` when the database did
/// not store or answer (``isStorageOutage(_:)``: retry), 500 `internal_error` otherwise.
package struct JSONErrorMiddleware: RouterMiddleware {
    /// Creates the middleware.
    package init() {}

    /// Passes the request on and translates what it throws.
    package func handle(
        _ request: Request, context: StoreLedgerRequestContext,
        next: (Request, StoreLedgerRequestContext) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            let code: String
            switch error.status {
            case .notFound: code = "not_found"
            case .methodNotAllowed: code = "method_not_allowed"
            case .contentTooLarge: code = "payload_too_large"
            case .requestTimeout: code = "request_timeout"
            case .badRequest: code = "invalid_request"
            default: code = "http_\(error.status.code)"
            }
            throw APIError(error.status, code: code, message: error.body ?? error.status.reasonPhrase)
        } catch let error as PSQLError where error.isRefusedText {
            context.logger.notice("the database refused a value the request carried", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(
                .badRequest, code: "invalid_request",
                message: "a value in the request cannot be stored or looked up (for example a NUL character); nothing was accepted")
        } catch let error as StoreError where error.code == .rebuildSwapping {
            context.logger.notice("turned away while a rebuild swaps the read model in", metadata: ["error": "\(error)"])
            throw APIError(
                .serviceUnavailable, code: "rebuild_in_progress",
                message: "a rebuild is swapping the read model in; retry in a few seconds (what this request stored before counts once)",
                headers: [.retryAfter: "5"])
        } catch  where Self.isStorageOutage(error) {
            context.logger.error("database error", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(
                .serviceUnavailable, code: "storage_unavailable",
                message: "the ledger's database could not store or answer; retry (a transaction or notification stored twice counts once)")
        } catch {
            context.logger.error("unexpected error", metadata: ["error": "\(String(reflecting: error))"])
            throw APIError(.internalServerError, code: "internal_error", message: "an unexpected error occurred; it has been logged")
        }
    }

    /// Whether `error` says the database did not store or answer (retry later), not that the request or the code is
    /// wrong: a PostgreSQL error, a transaction that did not commit, a database that did not answer in time, work undone
    /// by a concurrent rebuild.
    static func isStorageOutage(_ error: any Error) -> Bool {
        switch error {
        case is PSQLError, is DeadlineExceeded: return true
        case let error as StoreError: return [.unavailable, .notWritable, .notCommitted, .concurrentChange].contains(error.code)
        default: return false
        }
    }
}
