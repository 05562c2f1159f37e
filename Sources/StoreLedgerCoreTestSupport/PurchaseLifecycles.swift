package import StoreLedgerCore
package import StoreLedgerSimulation

/// One-time purchase lifecycles the projection tests share.
package enum PurchaseLifecycles {
    /// The purchases of `all()`, by role.
    package struct IDs {
        /// A consumable, refunded.
        package var refundedConsumable: TransactionID
        /// A non-consumable, refunded then reversed.
        package var reversedNonConsumable: TransactionID
        /// A family-shared non-consumable, revoked.
        package var familyRevoked: TransactionID
        /// A non-renewing subscription of 30 days, posted by the app.
        package var nonRenewing: TransactionID
        /// A consumable with a consumption request and a declined refund.
        package var declinedConsumable: TransactionID
    }

    /// Five purchases with refunds, a reversal, a family revoke and no-effect notifications.
    package static func all() -> (facts: [LedgerFact], ids: IDs, builder: PurchaseLifecycleBuilder) {
        var b = PurchaseLifecycleBuilder()
        let coins = b.buy("com.example.coins", type: .consumable, quantity: 3, price: 2_970, appAccountToken: "a1b2")
        b.appPosts(coins)
        let level = b.buy("com.example.level", type: .nonConsumable, price: 4_990)
        let shared = b.buy("com.example.pack", type: .nonConsumable, ownership: .familyShared)
        let pass = b.buy("com.example.pass", type: .nonRenewing, price: 14_990, expiresAfter: 30 * 86_400_000)
        b.appPosts(pass)
        let gems = b.buy("com.example.gems", type: .consumable)
        b.notifyWithoutEffect(.consumptionRequest, about: gems)
        b.notifyWithoutEffect(.refundDeclined, about: gems)
        b.refund(coins, reason: .appIssue)
        b.refund(level)
        b.familyRevoke(shared)
        b.reverseRefund(level)
        let ids = IDs(
            refundedConsumable: coins, reversedNonConsumable: level, familyRevoked: shared, nonRenewing: pass,
            declinedConsumable: gems)
        return (b.facts, ids, b)
    }
}
