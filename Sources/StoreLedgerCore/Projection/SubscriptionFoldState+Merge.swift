extension SubscriptionFoldState {
    /// Merges one verified fact of this subscription (facts of other rows are ignored). Returns false, leaving the
    /// state unchanged, when the stored winners cannot decide exactly; the caller then refolds from all facts.
    /// Merging a fact that was already merged changes nothing.
    public mutating func merge(_ fact: LedgerFact) -> Bool {
        guard fact.subscriptionKey == key else { return true }
        var next = self
        switch fact {
        case .transaction(let transaction):
            guard next.mergeTransaction(transaction) else { return false }
        case .renewalInfo(let renewalInfo):
            guard next.mergeRenewalInfo(renewalInfo) else { return false }
        case .notification(let notification):
            if let transaction = notification.transaction, !next.mergeTransaction(transaction) { return false }
            if let renewalInfo = notification.renewalInfo, !next.mergeRenewalInfo(renewalInfo) { return false }
            guard next.mergeNotification(notification) else { return false }
        }
        self = next
        return true
    }

    /// Merges one transaction version (standalone or nested).
    mutating func mergeTransaction(_ version: TransactionPayload) -> Bool {
        guard let id = version.transactionID?.rawValue else { return false }
        let stamp = Stamp(version.signedDate, .transaction)
        let time = version.signedDate?.millisecondsSince1970
        // Whether no version of any transaction was signed at or after this one: then it is its transaction's newest.
        let newest = current == nil || (time.map { time in latestTransactionTime.map { time > $0 } ?? true } ?? false)
        note(version.signedDate)

        // The current transaction: the newest version of each transaction, latest purchase then expiry, one not upgraded
        // away winning a tie. An upgraded one that would be current (its successor not known yet) is left to a refold.
        if let current {
            guard current.isUpgraded != true else { return false }
            if current.transactionID?.rawValue == id {
                let currentTime = current.signedDate?.millisecondsSince1970
                if time == currentTime {
                    guard version == current else { return false }
                } else if Self.isBefore(currentTime, time) {
                    // A newer version of the current transaction: it stays current only if it still outranks the rest.
                    guard version.isUpgraded != true, !(Self.rank(version) < Self.rank(current)) else { return false }
                    self.current = version
                }
            } else if version.isUpgraded != true {
                let (rank, currentRank) = (Self.rank(version), Self.rank(current))
                guard !(rank == currentRank) else { return false }
                if currentRank < rank {
                    guard newest else { return false }
                    makeCurrent(version, id: id)
                }
            } else if Self.rank(current) < Self.rank(version) {
                return false
            }
        } else {
            makeCurrent(version, id: id)
        }
        if let time, latestTransactionTime.map({ time > $0 }) ?? true { latestTransactionTime = time }

        // Revocation evidence of this transaction.
        let details = version.revocationDate.map {
            Revocation(revokedAt: $0, reason: version.revocationReason, type: version.revocationType)
        }
        if var evidence = transactions[id] {
            guard Self.offer(details, at: stamp, to: &evidence.revocation) else { return false }
            evidence.contested = evidence.contested || details != nil
            transactions[id] = evidence
        } else if details != nil {
            // First contested: its versions signed before are outranked, but a later one may exist unless this is newest.
            guard newest else { return false }
            transactions[id] = TransactionEvidence(revocation: Winner(stamp: stamp, value: details), contested: true)
        }

        // Status evidence: a version not revoked nor upgraded whose period had not ended when signed says "active", from
        // its purchase.
        if version.isUpgraded != true, version.revocationDate == nil,
            let signed = version.signedDate, let expires = version.expiresDate, expires > signed
        {
            let active = Stamp(SubscriptionProjection.activeSince(version, signed: signed), .transaction)
            if activeTransaction.map({ $0 < active }) ?? true { activeTransaction = active }
        }
        if let token = version.appAccountToken {
            guard Self.offer(token, at: Stamp(purchased: version), to: &latestPurchasedAppAccountToken) else { return false }
        }
        return true
    }

    /// Merges one renewal info (standalone or nested).
    mutating func mergeRenewalInfo(_ renewalInfo: RenewalInfoPayload) -> Bool {
        note(renewalInfo.signedDate)
        let stamp = Stamp(renewalInfo.signedDate, .renewalInfo)
        let columns = RenewalInfoColumns(productID: renewalInfo.productID, appAccountToken: renewalInfo.appAccountToken)
        guard Self.offer(columns, at: stamp, to: &latestRenewalInfo),
            Self.offer(renewalInfo.autoRenewStatus.map { $0 == .on }, at: stamp, to: &autoRenew),
            Self.offer(renewalInfo.autoRenewProductID, at: stamp, to: &autoRenewProductID),
            Self.offer(renewalInfo.expirationIntent, at: stamp, to: &expirationIntent),
            Self.offer(renewalInfo.gracePeriodExpiresDate, at: stamp, to: &gracePeriodExpiresAt),
            Self.offer(renewalInfo.priceIncreaseStatus, at: stamp, to: &priceIncreaseStatus)
        else { return false }
        if let signed = renewalInfo.signedDate {
            var status: SubscriptionStatus?
            if renewalInfo.isInBillingRetryPeriod == true {
                status = renewalInfo.gracePeriodExpiresDate.map { $0 > signed } ?? false ? .gracePeriod : .billingRetry
            } else if renewalInfo.expirationIntent != nil {
                status = .expired
            }
            if let status {
                guard Self.offer(RenewalStatus(status: status, signedAt: signed), at: stamp, to: &renewalStatus) else { return false }
            }
        }
        return true
    }

    /// Merges a notification's own evidence (its nested payloads are merged as transaction and renewal info).
    mutating func mergeNotification(_ notification: NotificationFact) -> Bool {
        note(notification.signedDate)
        hasNotifications = true
        let stamp = Stamp(notification.signedDate, .notification)
        if let bundleID = notification.bundleID {
            let order = Stamp(notification.signedDate, .notification, id: notification.notificationUUID?.rawValue ?? "")
            guard Self.offer(bundleID, at: order, to: &notificationBundleID) else { return false }
        }

        let stated = notification.statedStatus
        let aboutRefund = [.refund, .revoke, .refundReversed].contains(notification.type)
        if let stated {
            guard Self.offer(stated, at: stamp, to: &notificationStatus) else { return false }
        } else if !aboutRefund, let implied = SubscriptionProjection.impliedStatus(notification, current: nil) {
            guard Self.offer(implied, at: stamp, to: &notificationStatus) else { return false }
        }

        if aboutRefund, let id = notification.transaction?.transactionID?.rawValue {
            let transaction = notification.transaction
            let details: Revocation? =
                notification.type == .refundReversed
                ? nil
                : Revocation(
                    revokedAt: transaction?.revocationDate ?? notification.signedDate,
                    reason: transaction?.revocationReason,
                    type: transaction?.revocationType ?? (notification.type == .revoke ? .familyRevoke : nil)
                )
            var evidence: TransactionEvidence
            if let existing = transactions[id] {
                evidence = existing
            } else {
                // Its versions rank as transactions (below a notification at the same instant): none may be later.
                let time = notification.signedDate?.millisecondsSince1970
                guard current == nil || latestTransactionTime == nil || (time.map { latestTransactionTime! <= $0 } ?? false) else {
                    return false
                }
                evidence = TransactionEvidence(revocation: nil, contested: true)
            }
            guard Self.offer(details, at: stamp, to: &evidence.revocation) else { return false }
            evidence.contested = true
            if stated == nil {
                guard Self.offer(notification.type == .refundReversed ? .reversed : .revoked, at: stamp, to: &evidence.refundWord) else {
                    return false
                }
            }
            transactions[id] = evidence
        }

        switch (notification.type, notification.subtype) {
        case (.didChangeRenewalStatus?, .autoRenewEnabled?):
            return Self.offer(true, at: stamp, to: &autoRenew)
        case (.didChangeRenewalStatus?, .autoRenewDisabled?):
            return Self.offer(false, at: stamp, to: &autoRenew)
        case (.didChangeRenewalPref?, .upgrade?), (.didChangeRenewalPref?, nil):
            guard let product = notification.transaction?.productID else { return true }
            return Self.offer(product, at: stamp, to: &autoRenewProductID)
        case (.expired?, let subtype?):
            guard let intent = SubscriptionProjection.expirationIntent(for: subtype) else { return true }
            return Self.offer(intent, at: stamp, to: &expirationIntent)
        case (.priceIncrease?, .pending?):
            return Self.offer(.noResponse, at: stamp, to: &priceIncreaseStatus)
        case (.priceIncrease?, .accepted?):
            return Self.offer(.consented, at: stamp, to: &priceIncreaseStatus)
        case (.subscribed?, _), (.didRenew?, _):
            return Self.offer(nil, at: stamp, to: &expirationIntent) && Self.offer(nil, at: stamp, to: &gracePeriodExpiresAt)
        default:
            return true
        }
    }

    /// Makes `version` the current transaction; the previous one's evidence is kept only if it was contested.
    private mutating func makeCurrent(_ version: TransactionPayload, id: String) {
        if let previous = current?.transactionID?.rawValue, previous != id, transactions[previous]?.contested != true {
            transactions[previous] = nil
        }
        current = version
        if transactions[id] == nil { transactions[id] = TransactionEvidence(revocation: nil, contested: false) }
    }

    /// Moves `lastSignedAt` to `date` if it is later.
    private mutating func note(_ date: Timestamp?) {
        guard let date else { return }
        if lastSignedAt.map({ date > $0 }) ?? true { lastSignedAt = date }
    }

    /// How the current transaction is chosen among candidates: purchase date, then expiry (undated first).
    static func rank(_ transaction: TransactionPayload) -> Rank {
        Rank(purchase: transaction.purchaseDate?.millisecondsSince1970, expires: transaction.expiresDate?.millisecondsSince1970)
    }

    /// A candidate's purchase and expiry dates, compared in that order (undated first).
    struct Rank: Equatable, Comparable {
        /// Purchase date, epoch milliseconds.
        var purchase: Double?
        /// Expiry date, epoch milliseconds.
        var expires: Double?

        /// Orders by purchase date, then expiry.
        static func < (lhs: Rank, rhs: Rank) -> Bool {
            if lhs.purchase != rhs.purchase { return SubscriptionFoldState.isBefore(lhs.purchase, rhs.purchase) }
            return SubscriptionFoldState.isBefore(lhs.expires, rhs.expires)
        }
    }

    /// Whether `lhs` is strictly before `rhs`, undated (nil) first.
    static func isBefore(_ lhs: Double?, _ rhs: Double?) -> Bool {
        guard let rhs else { return false }
        guard let lhs else { return true }
        return lhs < rhs
    }
}
