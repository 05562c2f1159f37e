/// The resolved revocation state of one transaction: the latest word among its signed versions and the
/// REFUND / REVOKE / REFUND_REVERSED notifications about it. A later unrevoked version or a later reversal
/// undoes an earlier revocation; a later refund redoes it.
struct TransactionRevocation {
    /// When it was revoked, why and how; `nil` when the latest word is "not revoked".
    struct Details: Equatable {
        /// When access was revoked.
        var revokedAt: Timestamp?
        /// Why it was refunded.
        var reason: RevocationReason?
        /// How it was revoked.
        var type: RevocationType?
    }

    /// The evidence that decided.
    let order: EvidenceOrder
    /// The revocation, or `nil` if the transaction stands.
    let details: Details?
    /// Whether any evidence ever spoke of a revocation or reversal (otherwise nothing needs resolving).
    let wasContested: Bool

    /// Resolves the revocation of the transaction with the given id, or `nil` if no evidence mentions it.
    static func resolve(_ transactionID: TransactionID, in facts: NormalizedFacts) -> TransactionRevocation? {
        var latest = LatestValue<Details?>()
        var contested = false
        for item in facts.transactions where item.payload.transactionID == transactionID {
            let version = item.payload
            let details = version.revocationDate.map {
                Details(revokedAt: $0, reason: version.revocationReason, type: version.revocationType)
            }
            contested = contested || details != nil
            latest.offer(details, at: EvidenceOrder(version.signedDate, .transaction, item.canonical))
        }
        for item in facts.notifications where item.payload.transaction?.transactionID == transactionID {
            let notification = item.payload
            let order = EvidenceOrder(notification.signedDate, .notification, item.canonical)
            switch notification.type {
            case .refund?, .revoke?:
                let transaction = notification.transaction
                let details = Details(
                    revokedAt: transaction?.revocationDate ?? notification.signedDate,
                    reason: transaction?.revocationReason,
                    type: transaction?.revocationType ?? (notification.type == .revoke ? .familyRevoke : nil)
                )
                contested = true
                latest.offer(details, at: order)
            case .refundReversed?:
                contested = true
                latest.offer(nil, at: order)
            default:
                continue
            }
        }
        guard let winner = latest.winner else { return nil }
        return TransactionRevocation(order: winner.order, details: winner.value, wasContested: contested)
    }
}
