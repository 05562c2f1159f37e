import HTTPTypes
package import Hummingbird
import Logging
import NIOCore
import PostgresNIO

/// Puts the console's security headers on every response under `/console` — pages, redirects, errors, 404s and
/// 405s alike — and turns an unexpected error into a plain 500 page (logged, never shown), and a text the database
/// refuses (a NUL character in a search) into a 400 page.
///
/// `Content-Security-Policy: default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self';
/// form-action 'self'; frame-ancestors 'none'; base-uri 'none'`, `X-Content-Type-Options: nosniff`,
/// `Referrer-Policy: no-referrer`, `X-Frame-Options: DENY`, and `Cache-Control: no-store` unless the route set one.
/// Add it to the router before the console's routes: it then also wraps the not-found responder.
package struct ConsoleSecurityMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The policy every console response carries.
    package static var contentSecurityPolicy: String {
        "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    private static var referrerPolicy: HTTPField.Name { HTTPField.Name("Referrer-Policy")! }
    private static var frameOptions: HTTPField.Name { HTTPField.Name("X-Frame-Options")! }

    /// Creates the middleware.
    package init() {}

    /// Adds the headers to responses for `/console` paths; passes other paths through untouched.
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == "/console" || path.hasPrefix("/console/") else { return try await next(request, context) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        } catch let error as PSQLError where error.isRefusedText {
            context.logger.notice(
                "console request carried a value the database refuses", metadata: ["path": "\(path)", "error": "\(String(reflecting: error))"])
            response = Response(
                status: .badRequest, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: "<!DOCTYPE html><title>Bad request</title><p>The request carries a value that cannot be looked up "
                            + "(for example a NUL character).</p>")
                )
            )
        } catch {
            context.logger.error("console request failed", metadata: ["path": "\(path)", "error": "\(String(reflecting: error))"])
            response = Response(
                status: .internalServerError, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(string: "<!DOCTYPE html><title>Error</title><p>Something went wrong; the server log says what.</p>")
                )
            )
        }
        response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[Self.referrerPolicy] = "no-referrer"
        response.headers[Self.frameOptions] = "DENY"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}
