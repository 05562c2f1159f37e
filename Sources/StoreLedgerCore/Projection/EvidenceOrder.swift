/// When a piece of evidence was signed, and how it ranks against evidence signed at the same instant.
/// The later evidence wins; `tiebreak` (canonical content, encoded only when instant and rank tie) makes the
/// order total.
struct EvidenceOrder: Comparable {
    /// Tie-break ranks at equal instants: the later rank wins.
    enum Rank: Int, Comparable {
        /// A transaction version.
        case transaction = 0
        /// A renewal info.
        case renewalInfo = 1
        /// The resolved revocation of the current transaction.
        case revocation = 2
        /// A notification.
        case notification = 3

        /// Orders ranks by tie-break precedence.
        static func < (lhs: Rank, rhs: Rank) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Signed epoch milliseconds; missing dates sort first.
    let time: Double
    /// The rank at equal instants.
    let rank: Rank
    /// The evidence's canonical content.
    let tiebreak: CanonicalContent

    /// Evidence signed at `time` (missing sorts first) with a rank and a tie-break.
    init(_ time: Timestamp?, _ rank: Rank, _ tiebreak: CanonicalContent) {
        self.init(time: time?.millisecondsSince1970 ?? -.infinity, rank: rank, tiebreak: tiebreak)
    }

    private init(time: Double, rank: Rank, tiebreak: CanonicalContent) {
        self.time = time
        self.rank = rank
        self.tiebreak = tiebreak
    }

    /// The same instant and tie-break under another rank.
    func ranked(_ rank: Rank) -> EvidenceOrder {
        EvidenceOrder(time: time, rank: rank, tiebreak: tiebreak)
    }

    /// Orders by instant, then rank, then tie-break.
    static func < (lhs: EvidenceOrder, rhs: EvidenceOrder) -> Bool {
        if lhs.time != rhs.time { return lhs.time < rhs.time }
        if lhs.rank != rhs.rank { return lhs.rank < rhs.rank }
        return lhs.tiebreak < rhs.tiebreak
    }
}
