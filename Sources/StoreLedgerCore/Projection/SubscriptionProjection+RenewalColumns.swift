extension SubscriptionProjection {
    /// The columns that describe the next renewal, each written by the latest evidence that speaks to it.
    struct RenewalColumns {
        /// Whether the subscription renews.
        var autoRenew = LatestValue<Bool?>()
        /// The product that renews next.
        var autoRenewProductID = LatestValue<ProductID?>()
        /// Why it expired.
        var expirationIntent = LatestValue<ExpirationIntent?>()
        /// When the grace period ends.
        var gracePeriodExpiresAt = LatestValue<Timestamp?>()
        /// Price-increase consent.
        var priceIncreaseStatus = LatestValue<PriceIncreaseStatus?>()
    }

    /// Resolves the renewal columns. A renewal info is a full snapshot and writes all of them (an absent field
    /// clears it); a notification writes only what its type states, as a fallback for a missing renewal info.
    static func resolveRenewalColumns(_ facts: NormalizedFacts) -> RenewalColumns {
        var columns = RenewalColumns()
        for item in facts.renewalInfos {
            let renewalInfo = item.payload
            let order = EvidenceOrder(renewalInfo.signedDate, .renewalInfo, item.canonical)
            columns.autoRenew.offer(renewalInfo.autoRenewStatus.map { $0 == .on }, at: order)
            columns.autoRenewProductID.offer(renewalInfo.autoRenewProductID, at: order)
            columns.expirationIntent.offer(renewalInfo.expirationIntent, at: order)
            columns.gracePeriodExpiresAt.offer(renewalInfo.gracePeriodExpiresDate, at: order)
            columns.priceIncreaseStatus.offer(renewalInfo.priceIncreaseStatus, at: order)
        }
        for item in facts.notifications {
            let notification = item.payload
            let order = EvidenceOrder(notification.signedDate, .notification, item.canonical)
            switch (notification.type, notification.subtype) {
            case (.didChangeRenewalStatus?, .autoRenewEnabled?):
                columns.autoRenew.offer(true, at: order)
            case (.didChangeRenewalStatus?, .autoRenewDisabled?):
                columns.autoRenew.offer(false, at: order)
            case (.didChangeRenewalPref?, .upgrade?), (.didChangeRenewalPref?, nil):
                // An upgrade renews into the new product; no subtype cancels a downgrade: the current
                // product renews. Both are the nested transaction's product.
                if let product = notification.transaction?.productID {
                    columns.autoRenewProductID.offer(product, at: order)
                }
            case (.expired?, let subtype?):
                if let intent = expirationIntent(for: subtype) {
                    columns.expirationIntent.offer(intent, at: order)
                }
            case (.priceIncrease?, .pending?):
                columns.priceIncreaseStatus.offer(.noResponse, at: order)
            case (.priceIncrease?, .accepted?):
                columns.priceIncreaseStatus.offer(.consented, at: order)
            case (.subscribed?, _), (.didRenew?, _):
                // A new period: nothing has expired and no grace period runs.
                columns.expirationIntent.offer(nil, at: order)
                columns.gracePeriodExpiresAt.offer(nil, at: order)
            default:
                break
            }
        }
        return columns
    }

    /// The expiration intent an EXPIRED subtype states.
    static func expirationIntent(for subtype: NotificationSubtype) -> ExpirationIntent? {
        switch subtype {
        case .voluntary: .customerCancelled
        case .billingRetry: .billingError
        case .priceIncrease: .didNotConsentToPriceIncrease
        case .productNotForSale: .productNotAvailable
        default: nil
        }
    }
}
