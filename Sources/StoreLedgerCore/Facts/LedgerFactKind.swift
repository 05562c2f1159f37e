/// The kind of a `LedgerFact`; its order breaks ties between facts signed at the same instant.
///
/// Transactions sort first and notifications last, so at equal signed dates a notification's word on status
/// is the one that stands.
public enum LedgerFactKind: Int, Hashable, Sendable, Comparable, Codable {
    /// A standalone verified transaction.
    case transaction = 0
    /// A standalone verified renewal info.
    case renewalInfo = 1
    /// A verified notification.
    case notification = 2

    /// Orders kinds by their tie-break rank.
    public static func < (lhs: LedgerFactKind, rhs: LedgerFactKind) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
