import Foundation
package import Hummingbird
import StoreLedgerCore
import StoreLedgerStore

/// Purchase intents (seed 003): `POST /v1/purchase-intents` `{user_id, product_id, environment?}` →
/// `{correlation_id, …}`, the UUID the app passes to StoreKit as appAccountToken; `GET /v1/purchase-intents/{id}` →
/// pending, completed or expired. Server-to-server callers (API key) name the user; a signed-in user may create intents only for
/// themself (the token's user id; a different `user_id` is refused).
package struct PurchaseIntentsController: Sendable {
    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the controller.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// An intent as answered.
    struct IntentBody: Encodable {
        var correlation_id: String
        var user_id: String
        var product_id: String
        var status: String
        var created_at: Date
        var expires_at: Date
        var completed_at: Date?
        var transaction_id: String?
        var original_transaction_id: String?
        var purchased_product_id: String?
        var environment: String?
        var transaction_environment: String?

        init(_ intent: PurchaseIntent, at date: Date) {
            correlation_id = intent.correlationID.uuidString.lowercased()
            user_id = intent.userID.rawValue
            product_id = intent.productID.rawValue
            status = intent.status(at: date).rawValue
            created_at = intent.createdAt
            expires_at = intent.expiresAt
            completed_at = intent.completion?.completedAt
            transaction_id = intent.completion?.transactionID
            original_transaction_id = intent.completion?.originalTransactionID
            purchased_product_id = intent.completion?.productID
            environment = intent.answeredEnvironment
            transaction_environment = intent.completion?.environment
        }
    }

    /// Adds the routes (API key or user token).
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        let group = router.group("/v1/purchase-intents")
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .userOrService))
        group.post { request, context in try await create(request, context: context) }
        group.get(":id") { _, context in try await find(context: context) }
    }

    func create(_ request: Request, context: StoreLedgerRequestContext) async throws -> Response {
        struct Body: Decodable {
            /// A string, or a host app's numeric user id (`{"user_id": 42}` is user "42"), as in a user's JWT.
            var user_id: UserIDValue?
            var product_id: String
            /// The environment the app detected (seed 003: `sandbox` or `production`; `xcode`), in any case.
            var environment: String?
        }
        let body = try await JSONBody.decode(Body.self, from: request, context: context)
        let environment = try body.environment.map { text in
            guard let environment = PurchaseIntent.Environment(named: text) else {
                throw APIError(
                    .badRequest, code: "invalid_request",
                    message: "environment must be one of sandbox, production or xcode, not '\(text)'")
            }
            return environment
        }
        let user: UserID
        switch context.caller {
        case .user(let id):
            // An empty `user_id` names no one, as an absent one does: a host page that fills the field only for
            // service calls still works for a signed-in user.
            if let named = body.user_id?.value, !named.isEmpty, named != id.rawValue {
                throw APIError(.forbidden, code: "forbidden", message: "a signed-in user can create intents only for themself")
            }
            user = id
        default:
            guard let named = body.user_id?.value, !named.isEmpty else {
                throw APIError(.badRequest, code: "invalid_request", message: "user_id and product_id required")
            }
            user = UserID(named)
        }
        guard !body.product_id.isEmpty else { throw APIError(.badRequest, code: "invalid_request", message: "user_id and product_id required") }
        let intent = try await dependencies.intents.create(
            for: user, product: ProductID(body.product_id), environment: environment, lifetime: dependencies.intentLifetime,
            logger: context.logger
        )
        return try JSONBody.response(IntentBody(intent, at: dependencies.now()), status: .created)
    }

    func find(context: StoreLedgerRequestContext) async throws -> Response {
        let text = try context.parameters.require("id")
        guard let id = UUID(uuidString: text) else {
            throw APIError(.badRequest, code: "invalid_request", message: "'\(text)' is not a UUID")
        }
        guard let intent = try await dependencies.intents.find(id, logger: context.logger),
            context.caller?.user == nil || context.caller?.user == intent.userID
        else {
            throw APIError(.notFound, code: "intent_not_found", message: "no purchase intent \(text)")
        }
        return try JSONBody.response(IntentBody(intent, at: dependencies.now()))
    }
}
