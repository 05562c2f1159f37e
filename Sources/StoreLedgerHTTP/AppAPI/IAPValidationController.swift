import Foundation
public import Hummingbird
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore

/// Seed 002's contract (bearer JWT or API key): `POST /api/iap/validate` and `POST /api/iap/validate/sand`
/// `{transactionId, productId, revoked?, appAccountToken?}` → `{isUnlocked, productId, transactionId,
/// originalTransactionId, environment, revoked}`.
///
/// The transaction is looked up with Get Transaction Info — production first, then sandbox (`/sand`: sandbox
/// only) — and Apple's signed answer is appended to the log and projected before answering. The body's `revoked`
/// and `productId` are client claims: the answer reports what Apple signed. Not found anywhere → not unlocked (200).
public struct IAPValidationController: Sendable {
    /// The shared dependencies.
    public let dependencies: AppAPIDependencies

    /// Creates the controller.
    public init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// The answer.
    struct ValidateResponse: Encodable {
        var isUnlocked: Bool
        var productId: String
        var transactionId: String
        var originalTransactionId: String?
        var environment: String?
        var revoked: Bool

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(isUnlocked, forKey: .isUnlocked)
            try container.encode(productId, forKey: .productId)
            try container.encode(transactionId, forKey: .transactionId)
            try container.encode(originalTransactionId, forKey: .originalTransactionId)
            try container.encode(environment, forKey: .environment)
            try container.encode(revoked, forKey: .revoked)
        }

        enum CodingKeys: String, CodingKey { case isUnlocked, productId, transactionId, originalTransactionId, environment, revoked }
    }

    /// Adds both routes (user token or API key).
    public func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        let group = router.group("/api/iap")
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .userOrService))
        group.post("validate") { request, context in try await validate(request, context: context, scope: .anyEnvironment) }
        group.post("validate/sand") { request, context in try await validate(request, context: context, scope: .only(.sandbox)) }
    }

    func validate(_ request: Request, context: StoreLedgerRequestContext, scope: AppStoreLookup.Scope) async throws -> Response {
        struct Body: Decodable {
            var transactionId: FlexibleIdentifier?
            var productId: String?
        }
        let required = APIError(.badRequest, code: "invalid_request", message: "transactionId and productId required")
        let body: Body
        do {
            body = try await JSONBody.decode(Body.self, from: request, context: context)
        } catch let error as APIError where error.code == "invalid_request" {
            throw required
        }
        guard let transactionID = body.transactionId?.value, !transactionID.isEmpty, let productID = body.productId, !productID.isEmpty else {
            throw required
        }
        let lookup = AppStoreLookup(dependencies: dependencies)
        guard let submission = try await lookup.submit(
            transactionID: transactionID, scope: scope, user: context.caller?.user, request: request, context: context
        ) else {
            return try JSONBody.response(ValidateResponse(isUnlocked: false, productId: productID, transactionId: transactionID, revoked: false))
        }
        let accepted = try submission.requireAccepted()
        let transaction = accepted.transaction
        var row: Entitlement?
        if let stored = accepted.entitlement {
            row = try await dependencies.intake.entitlement(
                environment: stored.environment, transactionID: transaction.transactionID?.rawValue ?? stored.originalTransactionID,
                at: dependencies.now(), logger: context.logger
            )
        }
        let appleProduct = transaction.productID?.rawValue ?? productID
        let revoked = transaction.revocationDate != nil || row?.revokedAt != nil
        // Unlocked = the transaction's row grants premium now (entitlements_at): never for a consumable by default.
        let unlocked = !revoked && (row?.grants(ProductCatalog.premium) ?? false)
        return try JSONBody.response(
            ValidateResponse(
                isUnlocked: unlocked, productId: appleProduct, transactionId: transaction.transactionID?.rawValue ?? transactionID,
                originalTransactionId: transaction.originalTransactionID?.rawValue, environment: transaction.environment?.rawValue,
                revoked: revoked
            )
        )
    }
}
