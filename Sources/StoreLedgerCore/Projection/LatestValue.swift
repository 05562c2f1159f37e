/// A column written by several pieces of evidence: the value offered with the latest `EvidenceOrder` stands,
/// whatever order the offers come in.
struct LatestValue<Value> {
    /// The winning offer so far.
    private(set) var winner: (order: EvidenceOrder, value: Value)?

    /// Offers a value; it replaces the current one if its evidence is later.
    mutating func offer(_ value: Value, at order: EvidenceOrder) {
        if let winner, !(winner.order < order) { return }
        winner = (order, value)
    }

    /// The winning value, if any was offered.
    var value: Value? { winner?.value }
}
