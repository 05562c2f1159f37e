package import Hummingbird
import Logging

/// Requires callers of a route group to authenticate, and puts the ``Caller`` on the context.
///
/// No credentials → 401 `unauthenticated`; credentials that do not verify → 401 (`invalid_token`,
/// `token_expired`, `invalid_api_key`); the wrong kind of caller for the route → 403 `forbidden`.
package struct AuthenticationMiddleware: RouterMiddleware {
    /// Which callers a route group admits.
    package enum Requirement: Sendable {
        /// A signed-in user (bearer JWT).
        case user
        /// A server-to-server client (API key).
        case service
        /// Either.
        case userOrService
    }

    /// The authenticator.
    package let authenticator: Authenticator
    /// Who may call.
    package let requirement: Requirement

    /// Creates the middleware.
    package init(authenticator: Authenticator, requirement: Requirement) {
        self.authenticator = authenticator
        self.requirement = requirement
    }

    /// Authenticates, checks the requirement and calls the route.
    package func handle(
        _ request: Request, context: StoreLedgerRequestContext,
        next: (Request, StoreLedgerRequestContext) async throws -> Response
    ) async throws -> Response {
        guard let caller = try await authenticator.authenticate(request.headers, logger: context.logger) else {
            throw APIError(
                .unauthorized, code: "unauthenticated",
                message: requirement == .service
                    ? "this route needs an API key (X-API-Key)"
                    : "this route needs 'Authorization: Bearer <token>'")
        }
        switch (requirement, caller) {
        case (.user, .service):
            throw APIError(
                .forbidden, code: "forbidden", message: "this route acts for a signed-in user: use the user's bearer token, not an API key")
        case (.service, .user):
            throw APIError(.forbidden, code: "forbidden", message: "this route is for server-to-server callers with an API key")
        default:
            break
        }
        var context = context
        context.caller = caller
        context.logger[metadataKey: "caller"] = .string("\(caller)")
        return try await next(request, context)
    }
}
