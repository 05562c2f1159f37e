/// The deterministic total order of facts: signed date (missing first), kind, stable id, canonical content.
public struct LedgerFactSortKey: Hashable, Sendable, Comparable {
    /// When Apple signed the fact; a fact without one sorts before every dated fact.
    public var signedDate: Timestamp?
    /// The fact's kind.
    public var kind: LedgerFactKind
    /// The notification UUID, transaction id or original transaction id.
    public var stableID: String
    /// The fact itself, whose canonical JSON is the last resort, so two different facts never compare equal.
    public var fact: LedgerFact

    /// The fact's canonical JSON (encoded on each use: the order needs it only when everything else ties).
    public var canonicalContent: String { CanonicalJSON.string(fact) }

    /// Orders by signed date, then kind, then stable id, then canonical content.
    public static func < (lhs: LedgerFactSortKey, rhs: LedgerFactSortKey) -> Bool {
        let lhsDate = lhs.signedDate?.millisecondsSince1970 ?? -.infinity
        let rhsDate = rhs.signedDate?.millisecondsSince1970 ?? -.infinity
        if lhsDate != rhsDate { return lhsDate < rhsDate }
        if lhs.kind != rhs.kind { return lhs.kind < rhs.kind }
        if lhs.stableID != rhs.stableID { return lhs.stableID < rhs.stableID }
        if lhs.fact == rhs.fact { return false }
        return lhs.canonicalContent < rhs.canonicalContent
    }
}
