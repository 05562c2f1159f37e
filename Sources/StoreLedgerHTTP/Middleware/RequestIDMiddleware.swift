import Foundation
import HTTPTypes
package import Hummingbird
import Logging

/// Takes the request id from an incoming `X-Request-ID` (or makes one), puts it on every log line
/// of the request as `request_id`, and echoes it on the response.
package struct RequestIDMiddleware: RouterMiddleware {
    /// The header carrying the id.
    package static let headerName = HTTPField.Name("X-Request-ID")!

    /// Creates the middleware.
    package init() {}

    /// Tags the context and the response with the request id.
    package func handle(
        _ request: Request, context: StoreLedgerRequestContext,
        next: (Request, StoreLedgerRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        let incoming = request.headers[Self.headerName].flatMap { Self.isAcceptable($0) ? $0 : nil }
        let id = incoming ?? UUID().uuidString.lowercased()
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        do {
            var response = try await next(request, context)
            response.headers[Self.headerName] = id
            return response
        } catch let error as any HTTPResponseError {
            var response = try error.response(from: request, context: context)
            response.headers[Self.headerName] = id
            return response
        }
    }

    /// Accepts printable ASCII ids of at most 128 characters, so a client cannot inject log lines.
    static func isAcceptable(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
