public import Foundation
public import StoreLedgerCore

extension TestSigner {
    /// How a fact reaches StoreLedger, signed: a notification POSTed by Apple (nested data signed
    /// and embedded), a transaction posted by an app, or a renewal info from the Server API.
    public func signedEvent(for fact: LedgerFact) throws -> (source: EventSource, body: String) {
        switch fact {
        case .notification(let notification):
            var payload = notification.payload
            var data = payload.data ?? NotificationData()
            if let transaction = notification.transaction { data.signedTransactionInfo = try sign(transaction) }
            if let renewalInfo = notification.renewalInfo { data.signedRenewalInfo = try sign(renewalInfo) }
            if notification.transaction != nil || notification.renewalInfo != nil { payload.data = data }
            return (.appleNotification, try Self.json(["signedPayload": try sign(payload)]))
        case .transaction(let transaction):
            return (.client, try Self.json(["signedTransaction": try sign(transaction)]))
        case .renewalInfo(let renewalInfo):
            return (.serverAPI, try Self.json(["signedRenewalInfo": try sign(renewalInfo)]))
        }
    }

    private static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }
}
