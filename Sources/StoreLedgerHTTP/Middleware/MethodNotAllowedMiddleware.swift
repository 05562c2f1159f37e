package import Hummingbird

/// Answers **405** `method_not_allowed`, with an `Allow` header naming the methods the path has, when a request's path
/// is routed but its method is not; an unknown path stays a 404.
///
/// Hummingbird's router answers 404 for both. Add this middleware to a router **after its last route**: Hummingbird
/// applies a middleware only to routes added after it and to the not-found responder, so this one sees exactly the
/// requests no route took, and `routes` (the router's own list) is complete when it is built.
package struct MethodNotAllowedMiddleware<Context: RequestContext>: RouterMiddleware {
    /// One routed path and the methods it answers.
    struct Endpoint: Sendable {
        /// The path's components (literals and captures) as the router matches them.
        let components: [RouterPath.Element]
        /// The methods, sorted, as an `Allow` value.
        let allow: String
    }

    private let endpoints: [Endpoint]

    /// Builds the middleware from a router's complete route list (`router.routes`).
    package init(routes: [Router<Context>.RouteDescription]) {
        var methods: [String: (path: RouterPath, methods: Set<String>)] = [:]
        for route in routes {
            methods[route.path.description, default: (route.path, [])].methods.insert(route.method.rawValue)
        }
        endpoints = methods.values.map { Endpoint(components: Array($0.path), allow: $0.methods.sorted().joined(separator: ", ")) }
    }

    /// Throws the 405 when another method would have been routed, else passes the request on (to the 404).
    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let allow = allowedMethods(path: request.uri.path) else {
            return try await next(request, context)
        }
        throw APIError(
            .methodNotAllowed, code: "method_not_allowed",
            message: "\(request.method.rawValue) is not allowed on \(request.uri.path); allowed: \(allow)",
            headers: [.allow: allow]
        )
    }

    /// The `Allow` value of the most specific routed path matching `path` (literal components before captures, as
    /// the router prefers them), nil when no routed path matches.
    func allowedMethods(path: String) -> String? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var best: (endpoint: Endpoint, literals: [Bool])?
        for endpoint in endpoints where endpoint.components.count == parts.count {
            guard zip(endpoint.components, parts).allSatisfy({ $0 ~= $1 }) else { continue }
            let literals = zip(endpoint.components, parts).map { $0 == $1 }
            if let current = best, !literals.lexicographicallyPrecedes(current.literals, by: { $0 && !$1 }) { continue }
            best = (endpoint, literals)
        }
        return best?.endpoint.allow
    }
}
