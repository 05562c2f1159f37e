public import StoreLedgerCore

/// Turns the facts a lifecycle builder recorded into App Store-shaped signed notifications: the nested
/// transaction and renewal info are signed as their own JWS (`data.signedTransactionInfo`,
/// `data.signedRenewalInfo`), then the notification around them.
public struct NotificationSigner: Sendable {
    /// The signer used for every JWS.
    public let signer: AppStoreJWSSigner

    /// Creates a notification signer.
    public init(signer: AppStoreJWSSigner) {
        self.signer = signer
    }

    /// Signs one notification with its nested payloads.
    public func sign(_ fact: NotificationFact) throws(SimulationError) -> SimulatedNotification {
        do {
            var payload = fact.payload
            if payload.data != nil || fact.transaction != nil || fact.renewalInfo != nil {
                var data = payload.data ?? NotificationData()
                data.signedTransactionInfo = try fact.transaction.map { try signer.sign($0) }
                data.signedRenewalInfo = try fact.renewalInfo.map { try signer.sign($0) }
                payload.data = data
            }
            return SimulatedNotification(
                signedPayload: try signer.sign(payload),
                notificationUUID: payload.notificationUUID,
                type: payload.notificationType,
                subtype: payload.subtype,
                originalTransactionID: fact.transaction?.originalTransactionID ?? fact.renewalInfo?.originalTransactionID,
                transactionID: fact.transaction?.transactionID,
                signedDate: payload.signedDate
            )
        } catch {
            throw SimulationError(.signing, "cannot sign a \(fact.type?.rawValue ?? "notification"): \(error)")
        }
    }

    /// Signs the notifications among `facts`, in order; standalone transactions and renewal infos (which the
    /// app or the server API would deliver, not Apple's notifications) are left out.
    public func signNotifications(in facts: [LedgerFact]) throws(SimulationError) -> [SimulatedNotification] {
        var notifications: [SimulatedNotification] = []
        for fact in facts {
            if case .notification(let notification) = fact {
                notifications.append(try sign(notification))
            }
        }
        return notifications
    }
}
