import Hummingbird
import StoreLedgerCore
import StoreLedgerProcessing

extension StoreLedgerRequestContext {
    /// The signed-in user; routes behind `AuthenticationMiddleware(requirement: .user)` always have one.
    func requireUser() throws -> UserID {
        guard let user = caller?.user else {
            throw APIError(.unauthorized, code: "unauthenticated", message: "this route needs 'Authorization: Bearer <token>'")
        }
        return user
    }

    /// The request's origin, recorded with the events it appends.
    func origin(_ request: Request) -> PurchaseIntake.Origin {
        PurchaseIntake.Origin(
            route: request.uri.path, remoteAddress: remoteAddress.map { "\($0)" },
            userAgent: request.headers[.userAgent], requestID: requestID
        )
    }
}

extension PurchaseSubmission {
    /// The accepted transaction, or the error answer: 422 when it can never verify, 503 when it may later.
    func requireAccepted() throws -> Accepted {
        switch self {
        case .accepted(let accepted):
            return accepted
        case .rejected(let reason):
            throw APIError(.unprocessableContent, code: "invalid_signed_transaction", message: "the signed transaction was rejected: \(reason)")
        case .deferred(let reason):
            throw APIError(
                .serviceUnavailable, code: "verification_unavailable",
                message: "the transaction could not be verified now (\(reason)); it is kept and will be retried")
        }
    }
}
