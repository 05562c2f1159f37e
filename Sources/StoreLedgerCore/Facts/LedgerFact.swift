/// One verified fact about in-app purchases: the only input of the projections.
///
/// The read model is a pure function of a *set* of facts: the projections sort facts by `sortKey` and drop
/// duplicates by `identity`, so neither arrival order nor repeats change a row.
public indirect enum LedgerFact: Hashable, Sendable {
    /// A verified App Store Server Notification (from Apple, or found by reconciliation).
    case notification(NotificationFact)
    /// A verified standalone transaction (posted by an app or returned by the App Store Server API).
    case transaction(TransactionPayload)
    /// A verified standalone renewal info (returned by the App Store Server API).
    case renewalInfo(RenewalInfoPayload)

    /// When Apple signed the fact.
    public var signedDate: Timestamp? {
        switch self {
        case .notification(let notification): notification.signedDate
        case .transaction(let transaction): transaction.signedDate
        case .renewalInfo(let renewalInfo): renewalInfo.signedDate
        }
    }

    /// The fact's kind, which breaks ties between facts signed at the same instant.
    public var kind: LedgerFactKind {
        switch self {
        case .notification: .notification
        case .transaction: .transaction
        case .renewalInfo: .renewalInfo
        }
    }

    /// A stable id for ordering: the notification UUID, the transaction id, or the original transaction id.
    public var stableID: String {
        switch self {
        case .notification(let notification): notification.notificationUUID?.rawValue ?? ""
        case .transaction(let transaction): transaction.transactionID?.rawValue ?? ""
        case .renewalInfo(let renewalInfo): renewalInfo.originalTransactionID?.rawValue ?? ""
        }
    }

    /// The deterministic total order of facts: signed date, then kind, then stable id, then canonical content.
    public var sortKey: LedgerFactSortKey {
        LedgerFactSortKey(
            signedDate: signedDate,
            kind: kind,
            stableID: stableID,
            fact: self
        )
    }

    /// What makes two facts the same fact: a notification's UUID (Apple's retries keep it), otherwise the
    /// decoded content (the same JWS decodes to the same content).
    public var identity: LedgerFactIdentity {
        if case .notification(let notification) = self, let uuid = notification.notificationUUID {
            return .notification(uuid)
        }
        return .content(self)
    }
}
