/// Folds the verified facts of auto-renewable subscriptions into `SubscriptionState` rows.
///
/// The fold is a pure function of the *set* of facts: it never reads a clock, and any permutation or
/// duplication of the same facts, or a rebuild from scratch, gives the same row. The rules (which evidence
/// wins which column, and what each notification type does) are in `docs/projection.md`.
public enum SubscriptionProjection {
    /// Folds the facts that concern the subscription with the given key; the others are ignored.
    public static func fold(_ facts: some Sequence<LedgerFact>, key: SubscriptionKey) -> SubscriptionState? {
        fold(normalized: NormalizedFacts(facts.filter { $0.subscriptionKey == key }), key: key)
    }

    /// Folds the facts that concern the subscription with the given key, and returns the fold state later facts
    /// merge into (`merge(_:into:)`); the state is nil when these facts cannot be summarised exactly (see
    /// `SubscriptionFoldState`), and every later fact then refolds from all of them again.
    public static func foldWithState(
        _ facts: some Sequence<LedgerFact>, key: SubscriptionKey
    ) -> (row: SubscriptionState?, state: SubscriptionFoldState?) {
        let normalized = NormalizedFacts(facts.filter { $0.subscriptionKey == key })
        let row = fold(normalized: normalized, key: key)
        return (row, SubscriptionFoldState.replaying(normalized, key: key, expecting: row))
    }

    /// Merges new facts (in any order, repeats included) into a fold state: the row they fold to together with the
    /// facts already merged, in time independent of how many those are. Nil when the state cannot decide exactly:
    /// refold with `foldWithState` from all facts.
    public static func merge(
        _ facts: some Sequence<LedgerFact>, into state: SubscriptionFoldState
    ) -> (row: SubscriptionState?, state: SubscriptionFoldState)? {
        var state = state
        let ordered = facts.sorted { SubscriptionFoldState.isBefore($0.signedDate?.millisecondsSince1970, $1.signedDate?.millisecondsSince1970) }
        for fact in ordered {
            guard state.merge(fact) else { return nil }
        }
        guard case .row(let row) = state.resolve() else { return nil }
        return (row, state)
    }

    /// The app account token of the latest-purchased transaction that carries one (then the latest signed version of
    /// it, then fact order): the row's token when its current transaction has none. By purchase, not by signing, so
    /// that a late fact about an older period (a refund re-signs it) cannot bring back that period's older token.
    static func latestPurchasedAppAccountToken(_ facts: NormalizedFacts) -> AppAccountToken? {
        var best: (purchased: Double?, token: AppAccountToken)?
        // Facts are in (signed date, canonical content) order: a later one at the same purchase date wins.
        for item in facts.transactions {
            guard let token = item.payload.appAccountToken else { continue }
            let purchased = item.payload.purchaseDate?.millisecondsSince1970
            if let current = best, SubscriptionFoldState.isBefore(purchased, current.purchased) { continue }
            best = (purchased, token)
        }
        return best?.token
    }

    /// The fold proper, over facts already restricted to one subscription and normalized.
    static func fold(normalized facts: NormalizedFacts, key: SubscriptionKey) -> SubscriptionState? {
        let current = currentTransaction(facts)
        let renewalInfo = facts.renewalInfos.last?.payload
        guard current != nil || renewalInfo != nil || !facts.notifications.isEmpty else { return nil }

        let revocation = current?.payload.transactionID.flatMap { TransactionRevocation.resolve($0, in: facts) }
        let revocationDetails: TransactionRevocation.Details? =
            if let revocation {
                revocation.details
            } else {
                current?.payload.revocationDate.map {
                    .init(revokedAt: $0, reason: current?.payload.revocationReason, type: current?.payload.revocationType)
                }
            }

        let status = resolveStatus(facts, current: current?.payload, revocation: revocation, revoked: revocationDetails != nil)
        let renewal = resolveRenewalColumns(facts)

        var state = SubscriptionState(
            environment: key.environment,
            originalTransactionID: key.originalTransactionID,
            status: status
        )
        if let transaction = current?.payload {
            state.takeColumns(of: transaction)
        } else {
            state.productID = renewalInfo?.productID
        }
        state.bundleID = state.bundleID ?? facts.notifications.lazy.compactMap(\.payload.bundleID).last
        state.appAccountToken = current?.payload.appAccountToken ?? latestPurchasedAppAccountToken(facts) ?? renewalInfo?.appAccountToken
        state.revokedAt = revocationDetails?.revokedAt
        state.revocationReason = revocationDetails?.reason
        state.revocationType = revocationDetails?.type
        state.autoRenew = renewal.autoRenew.value ?? nil
        state.autoRenewProductID = renewal.autoRenewProductID.value ?? nil
        state.expirationIntent = renewal.expirationIntent.value ?? nil
        state.gracePeriodExpiresAt = renewal.gracePeriodExpiresAt.value ?? nil
        state.priceIncreaseStatus = renewal.priceIncreaseStatus.value ?? nil
        state.lastSignedAt = facts.lastSignedAt
        return state
    }

    /// The transaction of the current period: among the latest-signed version of each transaction, the one with the
    /// latest purchase date, then the latest expiry; on a tie, one not upgraded away from wins. A late-arriving older
    /// renewal can therefore never roll the period back, and neither can an upgrade whose new transaction is not
    /// known yet: the period upgraded away from stays current until its successor (purchased later) arrives, rather
    /// than an earlier, lapsed period taking its place.
    static func currentTransaction(_ facts: NormalizedFacts) -> NormalizedFacts.Item<TransactionPayload>? {
        facts.latestTransactionVersions.max { lhs, rhs in
            let l = lhs.payload
            let r = rhs.payload
            let lKey = (l.purchaseDate?.millisecondsSince1970 ?? -.infinity, l.expiresDate?.millisecondsSince1970 ?? -.infinity)
            let rKey = (r.purchaseDate?.millisecondsSince1970 ?? -.infinity, r.expiresDate?.millisecondsSince1970 ?? -.infinity)
            if lKey != rKey { return lKey < rKey }
            let (lStanding, rStanding) = (l.isUpgraded != true, r.isUpgraded != true)
            if lStanding != rStanding { return rStanding }
            return lhs.canonical < rhs.canonical
        }
    }
}
