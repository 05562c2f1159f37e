extension LedgerFact {
    /// The subscription row this fact concerns, if any: a subscription transaction's, a renewal info's, or that
    /// of a notification's nested transaction or renewal info. The environment is the notification's own.
    public var subscriptionKey: SubscriptionKey? {
        switch self {
        case .transaction(let transaction):
            return transaction.subscriptionKey
        case .renewalInfo(let renewalInfo):
            guard let environment = renewalInfo.environment, let id = renewalInfo.originalTransactionID else {
                return nil
            }
            return SubscriptionKey(environment: environment, originalTransactionID: id)
        case .notification(let notification):
            // Read from the notification's storage: through `notification.transaction` the whole payload was copied
            // (a retain per field) on every call, and the worker asks each fact for its keys several times per batch.
            return notification.subscriptionKey
        }
    }

    /// The one-time purchase row this fact concerns, if any: a one-time transaction's, or that of a
    /// notification's nested one-time transaction.
    public var purchaseKey: PurchaseKey? {
        switch self {
        case .transaction(let transaction):
            return transaction.purchaseKey
        case .renewalInfo:
            return nil
        case .notification(let notification):
            return notification.purchaseKey
        }
    }
}
