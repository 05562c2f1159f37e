extension SubscriptionFoldState {
    /// The state as the JSON its `Codable` conformance reads, written directly: the form `subscription_fold_states`
    /// stores, or nil when a number in it is not finite (then encode it with `JSONEncoder`, which refuses it).
    ///
    /// Every projected batch writes the states of the rows it touched; through `JSONEncoder` that was an eighth of a
    /// worker's CPU (the generic `Codable` machinery, not the JSON). The keys and shapes are those of the synthesized
    /// and hand-written `Codable` conformances (absent optionals left out, optional winner values written as `null`),
    /// and transactions are written in sorted id order, so equal states give equal text. `JSONDecoder` decodes the
    /// text back to an equal state (tested over every simulated lifecycle's states).
    public var storedJSON: String? {
        var out = JSONTextWriter(capacity: 2048)
        out.object { out in
            out.key("key")
            out.object { out in
                out.field("environment", key.environment.rawValue)
                out.field("originalTransactionID", key.originalTransactionID.rawValue)
            }
            if let current {
                out.key("current")
                out.transaction(current)
            }
            if let latestTransactionTime { out.field("latestTransactionTime", number: latestTransactionTime) }
            out.key("transactions")
            out.object { out in
                for id in transactions.keys.sorted() {
                    guard let evidence = transactions[id] else { continue }
                    out.key(id)
                    out.object { out in
                        if let revocation = evidence.revocation {
                            out.winner("revocation", revocation) { out, value in
                                guard let value else { return out.null() }
                                out.object { out in
                                    if let revokedAt = value.revokedAt { out.field("revokedAt", number: revokedAt.millisecondsSince1970) }
                                    if let reason = value.reason { out.field("reason", integer: Int64(reason.rawValue)) }
                                    if let type = value.type { out.field("type", type.rawValue) }
                                }
                            }
                        }
                        out.field("contested", evidence.contested)
                        if let refundWord = evidence.refundWord { out.winner("refundWord", refundWord) { $0.string($1.rawValue) } }
                    }
                }
            }
            if let activeTransaction {
                out.key("activeTransaction")
                out.stamp(activeTransaction)
            }
            if let renewalStatus {
                out.winner("renewalStatus", renewalStatus) { out, value in
                    out.object { out in
                        out.field("status", value.status.rawValue)
                        out.field("signedAt", number: value.signedAt.millisecondsSince1970)
                    }
                }
            }
            if let notificationStatus { out.winner("notificationStatus", notificationStatus) { $0.string($1.rawValue) } }
            if let autoRenew { out.winner("autoRenew", autoRenew) { out, value in value.map { out.bool($0) } ?? out.null() } }
            if let autoRenewProductID {
                out.winner("autoRenewProductID", autoRenewProductID) { out, value in value.map { out.string($0.rawValue) } ?? out.null() }
            }
            if let expirationIntent {
                out.winner("expirationIntent", expirationIntent) { out, value in value.map { out.integer(Int64($0.rawValue)) } ?? out.null() }
            }
            if let gracePeriodExpiresAt {
                out.winner("gracePeriodExpiresAt", gracePeriodExpiresAt) { out, value in
                    value.map { out.number($0.millisecondsSince1970) } ?? out.null()
                }
            }
            if let priceIncreaseStatus {
                out.winner("priceIncreaseStatus", priceIncreaseStatus) { out, value in value.map { out.integer(Int64($0.rawValue)) } ?? out.null() }
            }
            if let latestRenewalInfo {
                out.winner("latestRenewalInfo", latestRenewalInfo) { out, value in
                    out.object { out in
                        if let productID = value.productID { out.field("productID", productID.rawValue) }
                        if let token = value.appAccountToken { out.field("appAccountToken", token.rawValue) }
                    }
                }
            }
            if let notificationBundleID { out.winner("notificationBundleID", notificationBundleID) { $0.string($1.rawValue) } }
            if let transactionAppAccountToken {
                out.winner("transactionAppAccountToken", transactionAppAccountToken) { $0.string($1.rawValue) }
            }
            out.field("hasNotifications", hasNotifications)
            if let lastSignedAt { out.field("lastSignedAt", number: lastSignedAt.millisecondsSince1970) }
        }
        return out.failed ? nil : out.text
    }
}

/// The fold state's own values, in the shapes `Codable` gives them.
extension JSONTextWriter {
    /// A `Winner` member: its stamp and its value, which `body` writes.
    fileprivate mutating func winner<Value>(
        _ name: String, _ winner: SubscriptionFoldState.Winner<Value>, _ body: (inout JSONTextWriter, Value) -> Void
    ) {
        key(name)
        object { out in
            out.key("stamp")
            out.stamp(winner.stamp)
            out.key("value")
            body(&out, winner.value)
        }
    }

    /// A `Stamp`.
    fileprivate mutating func stamp(_ stamp: SubscriptionFoldState.Stamp) {
        object { out in
            if let time = stamp.time { out.field("time", number: time) }
            out.field("rank", integer: Int64(stamp.rank))
            if let id = stamp.id { out.field("id", id) }
        }
    }

    /// A `TransactionPayload` under Apple's keys, absent fields left out.
    fileprivate mutating func transaction(_ t: TransactionPayload) {
        object { out in
            if let v = t.originalTransactionID { out.field("originalTransactionId", v.rawValue) }
            if let v = t.transactionID { out.field("transactionId", v.rawValue) }
            if let v = t.webOrderLineItemID { out.field("webOrderLineItemId", v.rawValue) }
            if let v = t.bundleID { out.field("bundleId", v.rawValue) }
            if let v = t.productID { out.field("productId", v.rawValue) }
            if let v = t.subscriptionGroupIdentifier { out.field("subscriptionGroupIdentifier", v.rawValue) }
            if let v = t.purchaseDate { out.field("purchaseDate", number: v.millisecondsSince1970) }
            if let v = t.originalPurchaseDate { out.field("originalPurchaseDate", number: v.millisecondsSince1970) }
            if let v = t.expiresDate { out.field("expiresDate", number: v.millisecondsSince1970) }
            if let v = t.signedDate { out.field("signedDate", number: v.millisecondsSince1970) }
            if let v = t.revocationDate { out.field("revocationDate", number: v.millisecondsSince1970) }
            if let v = t.quantity { out.field("quantity", integer: Int64(v)) }
            if let v = t.type { out.field("type", v.rawValue) }
            if let v = t.appAccountToken { out.field("appAccountToken", v.rawValue) }
            if let v = t.inAppOwnershipType { out.field("inAppOwnershipType", v.rawValue) }
            if let v = t.revocationReason { out.field("revocationReason", integer: Int64(v.rawValue)) }
            if let v = t.revocationType { out.field("revocationType", v.rawValue) }
            if let v = t.revocationPercentage { out.field("revocationPercentage", integer: Int64(v)) }
            if let v = t.isUpgraded { out.field("isUpgraded", v) }
            if let v = t.offerType { out.field("offerType", integer: Int64(v.rawValue)) }
            if let v = t.offerIdentifier { out.field("offerIdentifier", v.rawValue) }
            if let v = t.offerDiscountType { out.field("offerDiscountType", v.rawValue) }
            if let v = t.offerPeriod { out.field("offerPeriod", v) }
            if let v = t.environment { out.field("environment", v.rawValue) }
            if let v = t.storefront { out.field("storefront", v) }
            if let v = t.storefrontID { out.field("storefrontId", v) }
            if let v = t.transactionReason { out.field("transactionReason", v.rawValue) }
            if let v = t.currency { out.field("currency", v) }
            if let v = t.price { out.field("price", integer: v) }
            if let v = t.appTransactionID { out.field("appTransactionId", v.rawValue) }
        }
    }
}
