import Foundation
import Hummingbird
import Logging
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerVerification

extension AppStorePaymentsController {
    /// `POST /verify` `{receipt_data}` (a legacy StoreKit 1 app receipt, or an older app's transaction receipt): the
    /// newest transaction of each product is read from the PKCS#7 receipt (its subscription's first), or the one the
    /// transaction receipt's purchase-info names (never sent to the deprecated verifyReceipt), looked up with the App
    /// Store Server API, and the first is answered as `/transaction`. The receipt itself is not trusted: Apple's signed
    /// answer is.
    func verifyReceipt(_ request: Request, context: StoreLedgerRequestContext) async throws -> Response {
        struct Body: Decodable { var receipt_data: String }
        let body = try await JSONBody.decode(Body.self, from: request, context: context)
        let user = try context.requireUser()
        let receipt: AppReceipt
        do {
            receipt = try AppReceipt(base64Encoded: body.receipt_data)
        } catch {
            throw APIError(.unprocessableContent, code: "invalid_receipt", message: "receipt_data is not an App Store receipt: \(error)")
        }
        let purchases = receipt.newestOfEachProduct
        guard let transactionID = purchases.first?.lookupID else {
            throw APIError(.unprocessableContent, code: "receipt_has_no_transactions", message: "the receipt holds no in-app purchase")
        }
        // One time budget for all of the receipt's lookups: the client waits for the whole answer.
        return try await AppStoreAPIClient.withDeadline(dependencies.appStoreBudget) {
            try await lookUp(purchases, first: transactionID, user: user, request: request, context: context)
        }
    }

    /// Looks the receipt's newest purchase of each product up at Apple (the first one must be found) and answers.
    private func lookUp(
        _ purchases: [AppReceipt.InAppPurchase], first transactionID: String, user: UserID, request: Request, context: StoreLedgerRequestContext
    ) async throws -> Response {
        let lookup = AppStoreLookup(dependencies: dependencies)
        guard
            let submission = try await lookup.submit(
                transactionID: transactionID, scope: .anyEnvironment, user: user, request: request, context: context)
        else {
            throw APIError(.notFound, code: "transaction_not_found", message: "Apple knows no transaction \(transactionID) from this receipt")
        }
        let accepted = try submission.requireAccepted()
        // The receipt's other products (a non-consumable, coins bought since the subscription): each looked up too, in the
        // environment the first was found in (one receipt is one environment's), so is_premium counts everything the
        // receipt holds; one Apple cannot answer for leaves the answer as it is, and a rate limit stops the rest.
        let scope = accepted.transaction.environment.flatMap(AppStoreAPIHost.init).map { AppStoreLookup.Scope.only($0) }
        for other in purchases.dropFirst().prefix(Self.maximumReceiptLookups - 1).compactMap(\.lookupID) {
            do {
                _ = try await lookup.submit(transactionID: other, scope: scope ?? .anyEnvironment, user: user, request: request, context: context)
            } catch let error as APIError where error.code == "upstream_rate_limited" {
                context.logger.notice(
                    "a receipt's other purchases were not looked up: Apple is rate limiting", metadata: ["transaction_id": "\(other)"])
                break
            } catch {
                context.logger.notice(
                    "a receipt's other purchase could not be looked up", metadata: ["transaction_id": "\(other)", "error": "\(error)"])
            }
        }
        return try await answer(for: accepted, user: user, context: context)
    }

    /// The most purchases one receipt's verification looks up at Apple (its subscription first, then the newest of each
    /// other product).
    static let maximumReceiptLookups = 10
}
