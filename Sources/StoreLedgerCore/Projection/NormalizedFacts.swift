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
        var kept: [(fact: LedgerFact, rank: Int)] = []
        var positions: [LedgerFactIdentity: Int] = [:]
        for fact in facts {
            let identity = fact.identity
            guard let position = positions[identity] else {
                positions[identity] = kept.count
                kept.append((fact, Self.nestedCount(fact)))
                continue
            }
            let existing = kept[position]
            if existing.fact == fact { continue }
            let rank = Self.nestedCount(fact)
            if (existing.rank, existing.fact.sortKey) >= (rank, fact.sortKey) { continue }
            kept[position] = (fact, rank)
        }
        // Sort by (signed date, kind, stable id) computed once per fact; the canonical content only on a tie.
        let keyed = kept.map { entry in
            (time: entry.fact.signedDate?.millisecondsSince1970 ?? -.infinity, kind: entry.fact.kind, id: entry.fact.stableID, fact: entry.fact)
        }
        let sorted = keyed.sorted { lhs, rhs in
            if lhs.time != rhs.time { return lhs.time < rhs.time }
            if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
            if lhs.id != rhs.id { return lhs.id < rhs.id }
            return lhs.fact.sortKey < rhs.fact.sortKey
        }

        // Transactions and renewal infos are distinct by decoded content: equal payloads are one version.
        var notifications: [Item<NotificationFact>] = []
        var transactions = DistinctPayloads<TransactionPayload> { DistinctPayloads.Bucket($0.transactionID?.rawValue, $0.signedDate) }
        var renewalInfos = DistinctPayloads<RenewalInfoPayload> { DistinctPayloads.Bucket($0.originalTransactionID?.rawValue, $0.signedDate) }
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
        self.transactions = transactions.itemsBySignedDate(\.signedDate)
        self.renewalInfos = renewalInfos.itemsBySignedDate(\.signedDate)

        let dates =
            notifications.map(\.payload.signedDate) + self.transactions.map(\.payload.signedDate)
            + self.renewalInfos.map(\.payload.signedDate)
        self.lastSignedAt = dates.compactMap { $0 }.max()
    }

    /// The latest-signed version of each distinct transaction id (a transaction without an id stands alone),
    /// ordered by transaction id (those without one first, by canonical content).
    var latestTransactionVersions: [Item<TransactionPayload>] {
        var latest: [TransactionID: Item<TransactionPayload>] = [:]
        var withoutID: [Item<TransactionPayload>] = []
        for item in transactions {  // ascending, so later versions overwrite earlier ones
            if let id = item.payload.transactionID {
                latest[id] = item
            } else {
                withoutID.append(item)
            }
        }
        return withoutID.sorted { $0.canonical < $1.canonical }
            + latest.sorted { $0.key.rawValue < $1.key.rawValue }.map(\.value)
    }

    /// Payloads kept once per decoded content. Equal payloads fall in the same bucket (a few cheap fields), so only
    /// payloads sharing a bucket are compared in full; hashing every field of every payload cost more.
    struct DistinctPayloads<Payload: Equatable & Encodable> {
        /// A payload's id and signed date.
        struct Bucket: Hashable {
            /// The payload's transaction id (or original transaction id).
            let id: String?
            /// When it was signed.
            let signedDate: Timestamp?
            /// A bucket for an id and signed date.
            init(_ id: String?, _ signedDate: Timestamp?) {
                self.id = id
                self.signedDate = signedDate
            }
        }

        private let bucket: (Payload) -> Bucket
        private var buckets: [Bucket: [Payload]] = [:]

        /// Distinct payloads, bucketed by `bucket`.
        init(bucket: @escaping (Payload) -> Bucket) {
            self.bucket = bucket
        }

        /// Adds `payload` unless an equal one is already there.
        mutating func insert(_ payload: Payload) {
            let key = bucket(payload)
            if buckets[key]?.contains(payload) == true { return }
            buckets[key, default: []].append(payload)
        }

        /// The distinct payloads ascending by (signed date, canonical content).
        func itemsBySignedDate(_ signedDate: (Payload) -> Timestamp?) -> [Item<Payload>] {
            var keyed: [(time: Double, item: Item<Payload>)] = []
            for payload in buckets.values.joined() {
                let time = signedDate(payload)?.millisecondsSince1970 ?? -.infinity
                keyed.append((time, Item(payload: payload, canonical: CanonicalContent(of: payload))))
            }
            keyed.sort { lhs, rhs in
                if lhs.time != rhs.time { return lhs.time < rhs.time }
                return lhs.item.canonical < rhs.item.canonical
            }
            return keyed.map(\.item)
        }
    }

    /// How many nested payloads a fact carries (a notification whose nested JWS were decoded is richer).
    private static func nestedCount(_ fact: LedgerFact) -> Int {
        guard case .notification(let notification) = fact else { return 0 }
        return (notification.transaction == nil ? 0 : 1) + (notification.renewalInfo == nil ? 0 : 1)
    }
}
