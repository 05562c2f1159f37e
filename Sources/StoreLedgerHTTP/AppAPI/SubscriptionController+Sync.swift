import Foundation
import Hummingbird
import StoreLedgerCore
import StoreLedgerProcessing

extension SubscriptionController {
    /// The answer to `POST /api/subscription/sync`.
    struct SyncResponse: Encodable {
        var success: Bool
        var is_premium: Bool
    }

    /// `POST /api/subscription/sync` `{transactionId, productId, purchaseDate, expirationDate, originalTransactionId}`:
    /// an unverified client claim, so only `transactionId` is used; the facts come from Apple (Get Transaction
    /// Info), go into the log and are projected; the claimed dates are never stored.
    func sync(_ request: Request, context: StoreLedgerRequestContext) async throws -> Response {
        struct Body: Decodable { var transactionId: FlexibleIdentifier }
        let body = try await JSONBody.decode(Body.self, from: request, context: context)
        let user = try context.requireUser()
        guard !body.transactionId.value.isEmpty else {
            throw APIError(.badRequest, code: "invalid_request", message: "transactionId required")
        }
        guard
            let submission = try await AppStoreLookup(dependencies: dependencies).submit(
                transactionID: body.transactionId.value, scope: .anyEnvironment, user: user, request: request, context: context
            )
        else {
            throw APIError(
                .notFound, code: "transaction_not_found", message: "Apple knows no transaction \(body.transactionId.value) in production or sandbox")
        }
        _ = try submission.requireAccepted()
        let summary = try await dependencies.intake.summary(of: user, at: dependencies.now(), logger: context.logger)
        return try JSONBody.response(SyncResponse(success: true, is_premium: summary.isPremium))
    }
}
