/// A set of facts made canonical: duplicates dropped, everything sorted by the deterministic fact order, and
/// the transactions and renewal infos nested in notifications pulled out beside the standalone ones.
struct NormalizedFacts {
    /// A decoded payload with its canonical JSON, which breaks ties and names contents without an id.
    struct Item<Payload> {
        /// The payload.
        let payload: Payload
        /// Its canonical JSON, encoded only if a tie needs it.
        let canonical: CanonicalContent
    }

    /// Notifications, ascending by (signed date, UUID, canonical content).
    let notifications: [Item<NotificationFact>]
    /// Distinct transaction versions, ascending by (signed date, canonical content).
    let transactions: [Item<TransactionPayload>]
    /// Distinct renewal infos, ascending by (signed date, canonical content).
    let renewalInfos: [Item<RenewalInfoPayload>]
    /// The latest signed date of any fact or nested payload.
    let lastSignedAt: Timestamp?

    /// Normalizes a collection of facts (in any order, with any duplicates).
    init(_ facts: some Sequence<LedgerFact>) {
        // Deduplicate by identity; among facts sharing an identity (a notification UUID seen with different
        // content, which verified input never has) keep the one with the most nested payloads, then the
        // greatest sort key, so the choice never depends on input order. Equal content is the same fact.
        var byIdentity: [LedgerFactIdentity: (fact: LedgerFact, rank: Int, key: LedgerFactSortKey)] = [:]
        for fact in facts {
            let identity = fact.identity
            if let existing = byIdentity[identity] {
                if existing.fact == fact { continue }
                let candidate = (rank: Self.nestedCount(fact), key: fact.sortKey)
                if (existing.rank, existing.key) >= candidate { continue }
                byIdentity[identity] = (fact, candidate.rank, candidate.key)
            } else {
                byIdentity[identity] = (fact, Self.nestedCount(fact), fact.sortKey)
            }
        }
        let sorted = byIdentity.values.sorted { $0.key < $1.key }

        // Transactions and renewal infos are distinct by decoded content: equal payloads are one version.
        var notifications: [Item<NotificationFact>] = []
        var transactions: Set<TransactionPayload> = []
        var renewalInfos: Set<RenewalInfoPayload> = []
        for entry in sorted {
            switch entry.fact {
            case .notification(let notification):
                notifications.append(Item(payload: notification, canonical: CanonicalContent(of: notification)))
                if let transaction = notification.transaction { transactions.insert(transaction) }
                if let renewalInfo = notification.renewalInfo { renewalInfos.insert(renewalInfo) }
            case .transaction(let transaction):
                transactions.insert(transaction)
            case .renewalInfo(let renewalInfo):
                renewalInfos.insert(renewalInfo)
            }
        }
        self.notifications = notifications
        self.transactions = transactions.map { Item(payload: $0, canonical: CanonicalContent(of: $0)) }
            .sorted { EvidenceOrder($0.payload.signedDate, .transaction, $0.canonical)
                < EvidenceOrder($1.payload.signedDate, .transaction, $1.canonical) }
        self.renewalInfos = renewalInfos.map { Item(payload: $0, canonical: CanonicalContent(of: $0)) }
            .sorted { EvidenceOrder($0.payload.signedDate, .renewalInfo, $0.canonical)
                < EvidenceOrder($1.payload.signedDate, .renewalInfo, $1.canonical) }

        let dates = notifications.map(\.payload.signedDate) + self.transactions.map(\.payload.signedDate)
            + self.renewalInfos.map(\.payload.signedDate)
        self.lastSignedAt = dates.compactMap { $0 }.max()
    }

    /// The latest-signed version of each distinct transaction id (a transaction without an id stands alone),
    /// ordered by transaction id (those without one first, by canonical content).
    var latestTransactionVersions: [Item<TransactionPayload>] {
        var latest: [String: Item<TransactionPayload>] = [:]
        for item in transactions {  // ascending, so later versions overwrite earlier ones
            latest[item.payload.transactionID.map { "id:" + $0.rawValue } ?? "content:" + item.canonical.string] = item
        }
        return latest.values.sorted { lhs, rhs in
            let l = lhs.payload.transactionID?.rawValue
            let r = rhs.payload.transactionID?.rawValue
            if l != r { return (l ?? "") < (r ?? "") || (l == nil && r != nil) }
            return lhs.canonical < rhs.canonical
        }
    }

    /// How many nested payloads a fact carries (a notification whose nested JWS were decoded is richer).
    private static func nestedCount(_ fact: LedgerFact) -> Int {
        guard case .notification(let notification) = fact else { return 0 }
        return (notification.transaction == nil ? 0 : 1) + (notification.renewalInfo == nil ? 0 : 1)
    }
}
