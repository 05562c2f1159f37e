import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// Every notification type and subtype of apple-notifications.md §5 (and unknown ones) has a defined effect
/// or none, and never breaks the fold.
@Suite("Core: notification effects")
struct CoreNotificationEffectTests {
    /// Every (type, subtype) pair Apple documents, plus unknown values.
    static let pairs: [(NotificationType, NotificationSubtype?)] = [
        (.subscribed, .initialBuy), (.subscribed, .resubscribe), (.didRenew, nil), (.didRenew, .billingRecovery),
        (.didChangeRenewalStatus, .autoRenewEnabled), (.didChangeRenewalStatus, .autoRenewDisabled),
        (.didChangeRenewalPref, .upgrade), (.didChangeRenewalPref, .downgrade), (.didChangeRenewalPref, nil),
        (.offerRedeemed, .initialBuy), (.offerRedeemed, .resubscribe), (.offerRedeemed, .upgrade),
        (.offerRedeemed, .downgrade), (.offerRedeemed, nil), (.didFailToRenew, .gracePeriod), (.didFailToRenew, nil),
        (.gracePeriodExpired, nil), (.expired, .voluntary), (.expired, .billingRetry), (.expired, .priceIncrease),
        (.expired, .productNotForSale), (.priceIncrease, .pending), (.priceIncrease, .accepted), (.refund, nil),
        (.revoke, nil), (.refundReversed, nil), (.refundDeclined, nil), (.consumptionRequest, nil),
        (.renewalExtended, nil), (.renewalExtension, .summary), (.renewalExtension, .failure), (.oneTimeCharge, nil),
        (.test, nil), (.externalPurchaseToken, .unreported), (.externalPurchaseToken, .created),
        (.externalPurchaseToken, .activeTokenReminder), (.rescindConsent, nil), (.metadataUpdate, nil),
        (.migration, nil), (.priceChange, nil), (NotificationType(rawValue: "FUTURE_TYPE"), NotificationSubtype(rawValue: "FUTURE")),
        (.didFailToRenew, NotificationSubtype(rawValue: "FUTURE")),
    ]

    /// The status a bare notification (no `data.status`) leaves an active subscription in, mid-period.
    static func expectedStatus(_ type: NotificationType, _ subtype: NotificationSubtype?) -> SubscriptionStatus {
        switch (type, subtype) {
        case (.didFailToRenew, .gracePeriod?): .gracePeriod
        case (.didFailToRenew, nil), (.gracePeriodExpired, _): .billingRetry
        case (.expired, _): .expired
        case (.refund, _), (.revoke, _): .revoked
        default: .active
        }
    }

    /// An active subscription mid-period, then one notification of the given type carrying the current
    /// transaction and renewal info as they were, without `data.status`.
    func fold(_ type: NotificationType, _ subtype: NotificationSubtype?, status: SubscriptionStatusCode? = nil) -> SubscriptionState? {
        var b = SubscriptionLifecycleBuilder(includesStatus: false)
        b.subscribe()
        b.advance(by: 86_400_000)
        b.notifyWithoutEffect(type, subtype)
        guard case .notification(var last) = b.facts.last! else { return nil }
        last.payload.data?.status = status
        return SubscriptionProjection.fold(b.facts.dropLast() + [.notification(last)])
    }

    /// Without data.status, each type and subtype has its documented effect on status.
    @Test func everyTypeHasItsEffectWithoutStatus() throws {
        for (type, subtype) in Self.pairs {
            let state = try #require(fold(type, subtype), "\(type) \(subtype?.rawValue ?? "-")")
            #expect(state.status == Self.expectedStatus(type, subtype), "\(type) \(subtype?.rawValue ?? "-")")
            #expect(state.entitled == state.status.entitles)
        }
    }

    /// data.status decides the status whatever the type; an unknown code falls back to the type.
    @Test func appleStatusIsAuthoritative() throws {
        let codes: [(SubscriptionStatusCode, SubscriptionStatus)] = [
            (.active, .active), (.expired, .expired), (.billingRetry, .billingRetry), (.gracePeriod, .gracePeriod),
            (.revoked, .revoked),
        ]
        for (type, subtype) in Self.pairs {
            for (code, status) in codes {
                let state = try #require(fold(type, subtype, status: code))
                #expect(state.status == status, "\(type) \(subtype?.rawValue ?? "-") status \(code)")
            }
            // An unknown status code falls back to the type's effect.
            let unknown = try #require(fold(type, subtype, status: SubscriptionStatusCode(rawValue: 42)))
            #expect(unknown.status == Self.expectedStatus(type, subtype))
        }
    }

    /// TEST and RENEWAL_EXTENSION/SUMMARY make no row.
    @Test func notificationsWithoutSubscriptionPayloadsProduceNoRow() throws {
        var test = NotificationPayload()
        test.notificationType = .test
        test.notificationUUID = "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6"
        test.signedDate = 1_681_314_324_000
        test.data = NotificationData()
        test.data?.environment = .sandbox
        var summary = NotificationPayload()
        summary.notificationType = .renewalExtension
        summary.subtype = .summary
        summary.summary = NotificationSummary()
        let facts: [LedgerFact] = [.notification(NotificationFact(payload: test)), .notification(NotificationFact(payload: summary))]
        #expect(SubscriptionProjection.fold(facts) == nil)
        #expect(PurchaseProjection.fold(facts) == nil)
        #expect(SubscriptionProjection.foldAll(facts).isEmpty)
    }

    /// Without renewal info, notifications still set auto-renew, price consent and expiration intent.
    @Test func renewalColumnsFollowNotificationsWithoutRenewalInfo() throws {
        // Notifications whose renewal info is missing still state what their type says.
        var b = SubscriptionLifecycleBuilder(includesStatus: false)
        b.subscribe()
        b.setAutoRenew(false)
        b.priceIncrease(.accepted, newPrice: 1)
        b.expire(.productNotForSale)
        let stripped: [LedgerFact] = b.facts.map {
            guard case .notification(var n) = $0 else { return $0 }
            n.renewalInfo = nil
            return .notification(n)
        }
        let state = try #require(SubscriptionProjection.fold(stripped))
        #expect(state.autoRenew == false)
        #expect(state.priceIncreaseStatus == .consented)
        #expect(state.expirationIntent == .productNotAvailable)
        #expect(state.status == .expired)
    }
}
