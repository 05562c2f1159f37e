package import StoreLedgerCore

/// Turns the facts a lifecycle builder recorded into App Store-shaped signed notifications: the nested
/// transaction and renewal info are signed as their own JWS (`data.signedTransactionInfo`,
/// `data.signedRenewalInfo`), then the notification around them.
package struct NotificationSigner: Sendable {
    /// The signer used for every JWS.
    package let signer: AppStoreJWSSigner

    /// Creates a notification signer.
    package init(signer: AppStoreJWSSigner) {
        self.signer = signer
    }

    /// Signs one notification with its nested payloads.
    ///
    /// Refuses a fact dated in fractional milliseconds unless it is signed for Xcode or LocalTesting: the App Store
    /// signs integer epoch milliseconds, and only Xcode's StoreKit testing writes fractions.
    package func sign(_ fact: NotificationFact) throws(SimulationError) -> SimulatedNotification {
        try Self.requireWholeMilliseconds(fact)
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

    /// Throws when a date of `fact` (the notification's, its transaction's or its renewal info's) carries a fraction
    /// of a millisecond and the data is not Xcode's.
    static func requireWholeMilliseconds(_ fact: NotificationFact) throws(SimulationError) {
        let environments = [fact.payload.data?.environment, fact.transaction?.environment, fact.renewalInfo?.environment]
        if environments.contains(where: { $0 == .xcode || $0 == .localTesting }) { return }
        let transaction = fact.transaction
        let renewal = fact.renewalInfo
        let dates: [(String, Timestamp?)] = [
            ("signedDate", fact.payload.signedDate),
            ("signedTransactionInfo.purchaseDate", transaction?.purchaseDate),
            ("signedTransactionInfo.originalPurchaseDate", transaction?.originalPurchaseDate),
            ("signedTransactionInfo.expiresDate", transaction?.expiresDate),
            ("signedTransactionInfo.signedDate", transaction?.signedDate),
            ("signedTransactionInfo.revocationDate", transaction?.revocationDate),
            ("signedRenewalInfo.gracePeriodExpiresDate", renewal?.gracePeriodExpiresDate),
            ("signedRenewalInfo.signedDate", renewal?.signedDate),
            ("signedRenewalInfo.recentSubscriptionStartDate", renewal?.recentSubscriptionStartDate),
            ("signedRenewalInfo.renewalDate", renewal?.renewalDate),
        ]
        for case (let field, let date?) in dates where !date.isWholeMilliseconds {
            throw SimulationError(
                .signing,
                "\(field) is \(date) ms: the App Store signs whole milliseconds (only Xcode data carries fractions)")
        }
    }

    /// Signs the notifications among `facts`, in order; standalone transactions and renewal infos (which the
    /// app or the server API would deliver, not Apple's notifications) are left out.
    package func signNotifications(in facts: [LedgerFact]) throws(SimulationError) -> [SimulatedNotification] {
        var notifications: [SimulatedNotification] = []
        for fact in facts {
            if case .notification(let notification) = fact {
                notifications.append(try sign(notification))
            }
        }
        return notifications
    }
}
