import Foundation
package import Hummingbird
import Logging
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerStore

/// Seed 002's contract (bearer JWT or API key, or none in the opt-in anonymous mode): `POST /api/iap/validate` and
/// `POST /api/iap/validate/sand` `{transactionId, productId, revoked?, appAccountToken?}` → `{isUnlocked, productId,
/// transactionId, originalTransactionId, environment, revoked}`. Every field of the answer is a string or boolean as
/// the seed documents it, never `null`: what Apple does not know (`originalTransactionId`, `environment` of a
/// transaction found nowhere) is left out.
///
/// With ``AppAPIDependencies/anonymousValidation`` set, a request without credentials is answered for the
/// transaction alone (linked to no user), at most so many per client address per minute (429 with `Retry-After`).
///
/// The transaction is looked up with Get Transaction Info — production first, then sandbox (`/sand`: sandbox
/// only) — and Apple's signed answer is appended to the log and projected before answering. The body's `revoked`
/// and `productId` are client claims: the answer reports what Apple signed. Not found anywhere → not unlocked (200).
package struct IAPValidationController: Sendable {
    /// The shared dependencies.
    package let dependencies: AppAPIDependencies

    /// Creates the controller.
    package init(dependencies: AppAPIDependencies) {
        self.dependencies = dependencies
    }

    /// The answer; the synthesized encoding leaves a nil field out rather than writing `null`.
    struct ValidateResponse: Encodable {
        var isUnlocked: Bool
        var productId: String
        var transactionId: String
        var originalTransactionId: String?
        var environment: String?
        var revoked: Bool
    }

    /// Adds both routes: behind a user token or API key, or — in the anonymous mode — open to callers without
    /// credentials, rate-limited per client address.
    package func addRoutes(to router: Router<StoreLedgerRequestContext>) {
        let group = router.group("/api/iap")
        if let anonymous = dependencies.anonymousValidation {
            let admit = AnonymousAdmission(authenticator: dependencies.authenticator, anonymous: anonymous, now: dependencies.now)
            group.post("validate") { request, context in
                try await validate(request, context: try await admit(request, context), scope: .anyEnvironment)
            }
            group.post("validate/sand") { request, context in
                try await validate(request, context: try await admit(request, context), scope: .only(.sandbox))
            }
            return
        }
        let authenticated =
            group
            .add(middleware: AuthenticationMiddleware(authenticator: dependencies.authenticator, requirement: .userOrService))
        authenticated.post("validate") { request, context in try await validate(request, context: context, scope: .anyEnvironment) }
        authenticated.post("validate/sand") { request, context in try await validate(request, context: context, scope: .only(.sandbox)) }
    }

    /// The anonymous mode's gate: credentials, when sent, must verify (and put their caller on the context, unlimited);
    /// without them, the client address spends one request of its allowance or the answer is 429.
    struct AnonymousAdmission: Sendable {
        let authenticator: Authenticator
        let anonymous: AnonymousValidation
        let now: @Sendable () -> Date

        func callAsFunction(_ request: Request, _ context: StoreLedgerRequestContext) async throws -> StoreLedgerRequestContext {
            var context = context
            if let caller = try await authenticator.authenticate(request.headers, logger: context.logger) {
                context.caller = caller
                context.logger[metadataKey: "caller"] = .string("\(caller)")
                return context
            }
            let address = anonymous.addresses.clientAddress(peer: context.remoteAddress, headers: request.headers)
            let key = ClientAddressResolver.limitKey(address)
            context.logger[metadataKey: "caller"] = .string("anonymous:\(key)")
            if case .limited(let seconds) = anonymous.limiter.acquire(key, now: now()) {
                context.logger.notice("anonymous validate rate-limited", metadata: ["client": "\(key)", "retry_after": "\(seconds)"])
                throw APIError(
                    .tooManyRequests, code: "rate_limited",
                    message: "too many validation requests from this address; retry after \(seconds) s",
                    headers: [.retryAfter: String(seconds)]
                )
            }
            return context
        }
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
        guard
            let submission = try await lookup.submit(
                transactionID: transactionID, scope: scope, user: context.caller?.user, request: request, context: context
            )
        else {
            return try JSONBody.response(
                ValidateResponse(
                    isUnlocked: false, productId: productID, transactionId: transactionID, originalTransactionId: nil,
                    environment: nil, revoked: false))
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
