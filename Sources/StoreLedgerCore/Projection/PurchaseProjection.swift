/// Folds the verified facts of consumable, non-consumable and non-renewing subscription purchases into
/// `PurchaseState` rows, one per (environment, transaction id).
///
/// Like `SubscriptionProjection`, a pure function of the set of facts: no clock, order and duplicates do not
/// matter. The latest-signed version of the transaction supplies the columns; revocation is resolved from the
/// versions and the REFUND / REVOKE / REFUND_REVERSED notifications, the latest word winning.
public enum PurchaseProjection {
    /// Folds the facts that concern the purchase with the given key; the others are ignored.
    public static func fold(_ facts: some Sequence<LedgerFact>, key: PurchaseKey) -> PurchaseState? {
        fold(normalized: NormalizedFacts(facts.filter { $0.purchaseKey == key }), key: key)
    }

    /// The fold proper, over facts already restricted to one purchase and normalized.
    static func fold(normalized facts: NormalizedFacts, key: PurchaseKey) -> PurchaseState? {
        guard let transaction = facts.transactions.last?.payload else { return nil }
        let revocation: TransactionRevocation.Details? =
            if let resolved = TransactionRevocation.resolve(key.transactionID, in: facts) {
                resolved.details
            } else {
                transaction.revocationDate.map {
                    .init(revokedAt: $0, reason: transaction.revocationReason, type: transaction.revocationType)
                }
            }

        var state = PurchaseState(environment: key.environment, transactionID: key.transactionID)
        state.originalTransactionID = transaction.originalTransactionID
        state.bundleID = transaction.bundleID
        state.productID = transaction.productID
        state.productType = transaction.type
        state.purchasedAt = transaction.purchaseDate
        state.expiresAt = transaction.expiresDate
        state.quantity = transaction.quantity
        state.price = transaction.price
        state.currency = transaction.currency
        state.ownership = transaction.inAppOwnershipType
        state.appAccountToken =
            transaction.appAccountToken
            ?? facts.transactions.lazy.compactMap(\.payload.appAccountToken).last
        state.storefront = transaction.storefront
        state.revokedAt = revocation?.revokedAt
        state.revocationReason = revocation?.reason
        state.revocationType = revocation?.type
        state.entitled = revocation == nil
        state.lastSignedAt = facts.lastSignedAt
        return state
    }
}
