import Foundation
package import HTTPTypes
package import Hummingbird
import NIOCore

/// A JSON error answer, `{"error": "<sentence>", "code": "<stable_code>"}`, used by every route.
package struct APIError: HTTPResponseError, Sendable {
    /// The HTTP status.
    package let status: HTTPResponse.Status
    /// A stable, machine-readable code (snake_case).
    package let code: String
    /// A sentence saying what went wrong and what to do.
    package let message: String
    /// Extra response headers (e.g. `Allow` on a 405, `Retry-After` on a 429).
    package var headers: HTTPFields

    /// Creates an error answer.
    package init(_ status: HTTPResponse.Status, code: String, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// Renders the JSON body.
    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = try JSONSerialization.data(withJSONObject: ["error": message, "code": code], options: [.sortedKeys])
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status,
            headers: fields,
            body: .init(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}
