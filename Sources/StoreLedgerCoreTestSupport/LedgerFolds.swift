package import StoreLedgerCore

/// Keyless folds for tests: fold whatever facts a test built without naming the row. Production folds one key at
/// a time (`SubscriptionProjection.fold(_:key:)`, `foldWithState`, `merge(_:into:)`), so these live here.
extension SubscriptionProjection {
    /// Folds the facts of one subscription; if they span several, the greatest key. Nil when none concerns one.
    package static func fold(_ facts: some Sequence<LedgerFact>) -> SubscriptionState? {
        let facts = Array(facts)
        guard let key = facts.compactMap(\.subscriptionKey).max() else { return nil }
        return fold(facts, key: key)
    }

    /// Folds any facts into one state per subscription they concern.
    package static func foldAll(_ facts: some Sequence<LedgerFact>) -> [SubscriptionKey: SubscriptionState] {
        let facts = Array(facts)
        var result: [SubscriptionKey: SubscriptionState] = [:]
        for key in Set(facts.compactMap(\.subscriptionKey)) {
            if let state = fold(facts, key: key) { result[key] = state }
        }
        return result
    }
}

extension PurchaseProjection {
    /// Folds the facts of one purchase; if they span several, the greatest key. Nil when none concerns one.
    package static func fold(_ facts: some Sequence<LedgerFact>) -> PurchaseState? {
        let facts = Array(facts)
        guard let key = facts.compactMap(\.purchaseKey).max() else { return nil }
        return fold(facts, key: key)
    }

    /// Folds any facts into one state per one-time purchase they concern.
    package static func foldAll(_ facts: some Sequence<LedgerFact>) -> [PurchaseKey: PurchaseState] {
        let facts = Array(facts)
        var result: [PurchaseKey: PurchaseState] = [:]
        for key in Set(facts.compactMap(\.purchaseKey)) {
            if let state = fold(facts, key: key) { result[key] = state }
        }
        return result
    }
}
