import Foundation
package import StoreLedgerCore
import StoreLedgerSimulation

extension TestSigner {
    /// How a fact reaches StoreLedger, signed: a notification POSTed by Apple (nested data signed and embedded,
    /// by `StoreLedgerSimulation`'s ``NotificationSigner``), a transaction posted by an app, or a renewal info from
    /// the Server API.
    package func signedEvent(for fact: LedgerFact) throws -> (source: EventSource, body: String) {
        switch fact {
        case .notification(let notification):
            // The simulator's notification signing: nested JWS signed and embedded, then the notification.
            let signed = try NotificationSigner(signer: appStoreSigner).sign(notification)
            return (.appleNotification, try Self.json(["signedPayload": signed.signedPayload]))
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
