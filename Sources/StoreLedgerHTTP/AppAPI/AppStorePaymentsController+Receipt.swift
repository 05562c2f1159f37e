import Foundation
import Hummingbird
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerVerification

extension AppStorePaymentsController {
    /// `POST /verify` `{receipt_data}` (a legacy StoreKit 1 app receipt, or an older app's transaction receipt): the
    /// newest transaction id is read from the PKCS#7 receipt, or the one the transaction receipt's purchase-info names
    /// (never sent to the deprecated verifyReceipt), looked up with the App Store Server API, and then handled as
    /// `/transaction`. The receipt itself is not trusted: Apple's signed answer is.
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
        guard let transactionID = receipt.transactionIDs.first else {
            throw APIError(.unprocessableContent, code: "receipt_has_no_transactions", message: "the receipt holds no in-app purchase")
        }
        guard
            let submission = try await AppStoreLookup(dependencies: dependencies).submit(
                transactionID: transactionID, scope: .anyEnvironment, user: user, request: request, context: context
            )
        else {
            throw APIError(.notFound, code: "transaction_not_found", message: "Apple knows no transaction \(transactionID) from this receipt")
        }
        return try await answer(for: try submission.requireAccepted(), user: user, context: context)
    }
}
