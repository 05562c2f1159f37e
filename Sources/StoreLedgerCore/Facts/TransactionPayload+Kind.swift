extension TransactionPayload {
    /// Whether this transaction belongs to an auto-renewable subscription (by `type`, or, when `type` is
    /// missing, by having a subscription group).
    public var isAutoRenewable: Bool {
        Self.isAutoRenewable(type: type, hasSubscriptionGroup: subscriptionGroupIdentifier != nil)
    }

    /// ``isAutoRenewable`` from the two fields it reads (for a holder that reads them without copying the payload).
    static func isAutoRenewable(type: ProductType?, hasSubscriptionGroup: Bool) -> Bool {
        if let type { return type == .autoRenewable }
        return hasSubscriptionGroup
    }

    /// The subscription row this transaction belongs to, if it is an auto-renewable subscription transaction.
    public var subscriptionKey: SubscriptionKey? {
        guard isAutoRenewable, let environment, let originalTransactionID else { return nil }
        return SubscriptionKey(environment: environment, originalTransactionID: originalTransactionID)
    }

    /// The purchase row this transaction belongs to, if it is a consumable, non-consumable or non-renewing
    /// subscription transaction.
    public var purchaseKey: PurchaseKey? {
        guard !isAutoRenewable, let environment, let transactionID else { return nil }
        return PurchaseKey(environment: environment, transactionID: transactionID)
    }
}
