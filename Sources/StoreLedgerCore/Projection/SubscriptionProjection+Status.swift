extension SubscriptionProjection {
    /// The status: that of the latest piece of status evidence by signed date. Evidence is
    /// - a notification: Apple's `data.status` when present (authoritative at its signed date), otherwise the
    ///   status its type implies (see `impliedStatus`);
    /// - a transaction version that is not revoked or upgraded and whose period had not ended when it was
    ///   signed: active from its purchase (``activeSince(_:signed:)``);
    /// - a renewal info signed after the current period ended: grace period or billing retry while Apple
    ///   retries billing, expired once it carries an expiration intent;
    /// - the resolved revocation of the current transaction: revoked, or after a reversal the status as if it
    ///   had never been revoked.
    /// Without any evidence, the status is read from the current transaction alone.
    static func resolveStatus(
        _ facts: NormalizedFacts,
        current: TransactionPayload?,
        revocation: TransactionRevocation?,
        revoked: Bool
    ) -> SubscriptionStatus {
        var status = LatestValue<SubscriptionStatus>()

        for item in facts.transactions {
            let version = item.payload
            guard version.isUpgraded != true, version.revocationDate == nil,
                let signed = version.signedDate, let expires = version.expiresDate, expires > signed
            else { continue }
            status.offer(.active, at: EvidenceOrder(activeSince(version, signed: signed), .transaction, item.canonical))
        }

        for item in facts.renewalInfos {
            let renewalInfo = item.payload
            guard let signed = renewalInfo.signedDate,
                current?.expiresDate.map({ $0 <= signed }) ?? true
            else { continue }
            let order = EvidenceOrder(signed, .renewalInfo, item.canonical)
            if renewalInfo.isInBillingRetryPeriod == true {
                let inGrace = renewalInfo.gracePeriodExpiresDate.map { $0 > signed } ?? false
                status.offer(inGrace ? .gracePeriod : .billingRetry, at: order)
            } else if renewalInfo.expirationIntent != nil {
                status.offer(.expired, at: order)
            }
        }

        if let revocation, revocation.wasContested {
            let order = revocation.order.ranked(.revocation)
            let value = revocation.details != nil ? .revoked : statusIgnoringRevocation(current, at: order.time)
            status.offer(value, at: order)
        }

        for item in facts.notifications {
            let notification = item.payload
            let stated = notification.statedStatus
            guard let value = stated ?? impliedStatus(notification, current: current) else { continue }
            status.offer(value, at: EvidenceOrder(notification.signedDate, .notification, item.canonical))
        }

        if let value = status.value { return value }
        if revoked { return .revoked }
        if let expires = current?.expiresDate, let last = facts.lastSignedAt, expires <= last { return .expired }
        return .active
    }

    /// The instant a transaction version is evidence of an active subscription at: its purchase, the start of the
    /// period it was bought for (its signed date when that is earlier, or when it carries no purchase date). A copy
    /// signed later — the app posting the current transaction, Apple's API answering with it — says nothing newer
    /// about that period, so a renewal failure signed after the purchase (Apple charges up to a day before the period
    /// ends) is not undone by it; only a new transaction, a renewal or a recovery, is.
    static func activeSince(_ version: TransactionPayload, signed: Timestamp) -> Timestamp {
        version.purchaseDate.map { min($0, signed) } ?? signed
    }

    /// The status a notification's type and subtype imply when it carries no `data.status`; `nil` when the
    /// type says nothing about status (it is still recorded).
    static func impliedStatus(_ notification: NotificationFact, current: TransactionPayload?) -> SubscriptionStatus? {
        let concernsCurrent =
            notification.transaction?.transactionID != nil
            && notification.transaction?.transactionID == current?.transactionID
        switch notification.type {
        case .subscribed?, .didRenew?:
            return .active
        case .offerRedeemed?:
            switch notification.subtype {
            case .initialBuy?, .resubscribe?, .upgrade?: return .active
            default: return nil
            }
        case .didChangeRenewalPref?:
            return notification.subtype == .upgrade ? .active : nil
        case .didFailToRenew?:
            switch notification.subtype {
            case .gracePeriod?: return .gracePeriod
            case nil: return .billingRetry
            default: return nil
            }
        case .gracePeriodExpired?:
            return .billingRetry
        case .expired?:
            return .expired
        case .refund?, .revoke?:
            return concernsCurrent ? .revoked : nil
        case .refundReversed?:
            guard concernsCurrent else { return nil }
            return statusIgnoringRevocation(current, at: notification.signedDate?.millisecondsSince1970 ?? -.infinity)
        default:
            return nil
        }
    }

    /// The status of a transaction that is not (or no longer) revoked, at an instant: active until it expires.
    static func statusIgnoringRevocation(_ transaction: TransactionPayload?, at milliseconds: Double) -> SubscriptionStatus {
        guard let expires = transaction?.expiresDate else { return .active }
        return expires.millisecondsSince1970 > milliseconds ? .active : .expired
    }
}
