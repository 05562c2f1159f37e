extension SubscriptionFoldState {
    /// What a fold state resolves to.
    public enum Resolution: Hashable, Sendable {
        /// The row (nil when no fact concerns the subscription).
        case row(SubscriptionState?)
        /// Two kinds of status evidence tie (same instant and rank) and disagree: refold from all facts.
        case undecided
    }

    /// The row the merged facts fold to: the same as `SubscriptionProjection.fold` of them, or `.undecided`.
    public func resolve() -> Resolution {
        guard current != nil || latestRenewalInfo != nil || hasNotifications else { return .row(nil) }
        let evidence = current?.transactionID.flatMap { transactions[$0.rawValue] }
        let revocation = evidence?.revocation?.value ?? nil

        // Status: the latest piece of status evidence of each kind, then the latest of those.
        var status: Winner<SubscriptionStatus>?
        var decided = true
        func consider(_ value: SubscriptionStatus, at stamp: Stamp) {
            decided = Self.offer(value, at: stamp, to: &status) && decided
        }
        if let activeTransaction { consider(.active, at: activeTransaction) }
        if let renewalStatus, current?.expiresDate.map({ $0 <= renewalStatus.value.signedAt }) ?? true {
            consider(renewalStatus.value.status, at: renewalStatus.stamp)
        }
        if let evidence, evidence.contested, let winner = evidence.revocation {
            let time = winner.stamp.time
            consider(
                winner.value != nil ? .revoked : SubscriptionProjection.statusIgnoringRevocation(current, at: time ?? -.infinity),
                at: Stamp(time: time, rank: .revocation)
            )
        }
        if let notificationStatus { consider(notificationStatus.value, at: notificationStatus.stamp) }
        if let word = evidence?.refundWord {
            consider(
                word.value == .revoked
                    ? .revoked : SubscriptionProjection.statusIgnoringRevocation(current, at: word.stamp.time ?? -.infinity),
                at: word.stamp
            )
        }
        guard decided else { return .undecided }
        let resolvedStatus: SubscriptionStatus =
            if let status {
                status.value
            } else if revocation != nil {
                .revoked
            } else if let expires = current?.expiresDate, let last = lastSignedAt, expires <= last {
                .expired
            } else {
                .active
            }

        var state = SubscriptionState(environment: key.environment, originalTransactionID: key.originalTransactionID, status: resolvedStatus)
        if let transaction = current {
            state.takeColumns(of: transaction)
        } else {
            state.productID = latestRenewalInfo?.value.productID
        }
        state.bundleID = state.bundleID ?? notificationBundleID?.value
        state.appAccountToken = current?.appAccountToken ?? latestPurchasedAppAccountToken?.value ?? latestRenewalInfo?.value.appAccountToken
        state.revokedAt = revocation?.revokedAt
        state.revocationReason = revocation?.reason
        state.revocationType = revocation?.type
        state.autoRenew = autoRenew?.value ?? nil
        state.autoRenewProductID = autoRenewProductID?.value ?? nil
        state.expirationIntent = expirationIntent?.value ?? nil
        state.gracePeriodExpiresAt = gracePeriodExpiresAt?.value ?? nil
        state.priceIncreaseStatus = priceIncreaseStatus?.value ?? nil
        state.lastSignedAt = lastSignedAt
        return .row(state)
    }

    /// The fold state of normalized facts, built by merging their parts in signing order, or nil when a merge
    /// cannot decide or the result would not equal `expected` (the full fold of the same facts).
    static func replaying(_ facts: NormalizedFacts, key: SubscriptionKey, expecting expected: SubscriptionState?) -> SubscriptionFoldState? {
        enum Part {
            case transaction(TransactionPayload)
            case renewalInfo(RenewalInfoPayload)
            case notification(NotificationFact)
        }
        var parts: [(stamp: Stamp, part: Part)] = []
        parts.reserveCapacity(facts.transactions.count + facts.renewalInfos.count + facts.notifications.count)
        for item in facts.transactions { parts.append((Stamp(item.payload.signedDate, .transaction), .transaction(item.payload))) }
        for item in facts.renewalInfos { parts.append((Stamp(item.payload.signedDate, .renewalInfo), .renewalInfo(item.payload))) }
        for item in facts.notifications { parts.append((Stamp(item.payload.signedDate, .notification), .notification(item.payload))) }
        // Signing order, except that versions upgraded away come last: merged before the transaction that replaced
        // them they would unseat the current one with nothing the state knows to put in its place; merged after it
        // they change nothing. (Merges are exact in any order; the order only decides whether one refuses.)
        func upgraded(_ part: Part) -> Bool {
            if case .transaction(let transaction) = part { transaction.isUpgraded == true } else { false }
        }
        parts.sort { lhs, rhs in
            let (l, r) = (upgraded(lhs.part), upgraded(rhs.part))
            return l != r ? r : lhs.stamp < rhs.stamp
        }
        var state = SubscriptionFoldState(key: key)
        for (_, part) in parts {
            let merged =
                switch part {
                case .transaction(let transaction): state.mergeTransaction(transaction)
                case .renewalInfo(let renewalInfo): state.mergeRenewalInfo(renewalInfo)
                case .notification(let notification): state.mergeNotification(notification)
                }
            guard merged else { return nil }
        }
        guard state.resolve() == .row(expected) else { return nil }
        return state
    }
}
