import StoreLedgerCore
import StoreLedgerCoreTestSupport
import StoreLedgerSimulation
import Testing

/// The subscription fold on realistic lifecycles: explicit final and intermediate states, with Apple's
/// `data.status` and without it (type-implied status).
@Suite("Core: subscription projection")
struct CoreSubscriptionProjectionTests {
    /// One day in milliseconds.
    let day = SubscriptionLifecycles.day
    /// One subscription period in milliseconds.
    let period = SubscriptionLifecycles.period

    /// Folds a builder's facts.
    func fold(_ builder: SubscriptionLifecycleBuilder) throws -> SubscriptionState {
        try #require(SubscriptionProjection.fold(builder.facts))
    }

    /// buy → renew ×3 → auto-renew off → expire: expired, not entitled, the fourth period's dates.
    @Test(arguments: [true, false])
    func renewThenExpire(includesStatus: Bool) throws {
        let b = SubscriptionLifecycles.renewThenExpire(includesStatus: includesStatus)
        let state = try fold(b)
        let start: Timestamp = 1_700_000_000_000
        #expect(state.key == SubscriptionKey(environment: .sandbox, originalTransactionID: "1000"))
        #expect(state.status == .expired)
        #expect(!state.entitled)
        #expect(state.latestTransactionID == "1004")
        #expect(state.productID == "com.example.monthly")
        #expect(state.bundleID == "com.example.app")
        #expect(state.subscriptionGroup == "21000000")
        #expect(state.purchasedAt == start.adding(milliseconds: 3 * period))
        #expect(state.expiresAt == start.adding(milliseconds: 4 * period))
        #expect(state.originalPurchasedAt == start)
        #expect(state.autoRenew == false)
        #expect(state.expirationIntent == .customerCancelled)
        #expect(state.ownership == .purchased)
        #expect(state.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(state.price == 9_990)
        #expect(state.currency == "USD")
        #expect(state.revokedAt == nil)
        #expect(state.lastSignedAt == b.facts.compactMap(\.signedDate).max())
    }

    /// Auto-renew off keeps the subscription active until its expiry.
    @Test func autoRenewOffKeepsServiceUntilExpiry() throws {
        var b = SubscriptionLifecycleBuilder()
        b.subscribe()
        b.renew()
        b.setAutoRenew(false)
        let state = try fold(b)
        #expect(state.status == .active)
        #expect(state.entitled)
        #expect(state.autoRenew == false)
    }

    /// In grace: entitled until the grace end; after recovery: active, a new period.
    @Test(arguments: [true, false])
    func graceThenRecover(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "2000", includesStatus: includesStatus)
        b.subscribe()
        let firstExpiry = b.current.expiresDate!
        b.failToRenew(gracePeriod: 16 * day)

        let inGrace = try fold(b)
        #expect(inGrace.status == .gracePeriod)
        #expect(inGrace.entitled)
        #expect(inGrace.gracePeriodExpiresAt == firstExpiry.adding(milliseconds: 16 * day))
        #expect(inGrace.expiresAt == firstExpiry)

        b.advance(by: 2 * day)
        let recoveredAt = b.now
        b.recover()
        let state = try fold(b)
        #expect(state.status == .active)
        #expect(state.entitled)
        #expect(state.gracePeriodExpiresAt == nil)
        #expect(state.purchasedAt == recoveredAt)
        #expect(state.expiresAt == recoveredAt.adding(milliseconds: period))
        #expect(state == (try fold(SubscriptionLifecycles.graceThenRecover(includesStatus: includesStatus))))
    }

    /// Grace expired: billing retry, not entitled; then recovery.
    @Test(arguments: [true, false])
    func graceExpiresIntoBillingRetry(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(includesStatus: includesStatus)
        b.subscribe()
        b.failToRenew(gracePeriod: 6 * day)
        b.gracePeriodExpired()
        let retrying = try fold(b)
        #expect(retrying.status == .billingRetry)
        #expect(!retrying.entitled)

        let final = try fold(SubscriptionLifecycles.graceExpiresThenRecover(includesStatus: includesStatus))
        #expect(final.status == .active)
        #expect(final.entitled)
        #expect(final.latestTransactionID == "2502")
    }

    /// A renewal that fails before the period ends (Apple charges up to a day early) puts the row in its grace period,
    /// and a copy of the period's transaction signed after the failure (the app posting it, Apple's API answering) does
    /// not take it out again: only a new transaction (a renewal, a recovery) does. It once read "active", so after the
    /// period's end the row said expired and the customer lost the grace period.
    @Test(arguments: [true, false])
    func anEarlyRenewalFailureOutlivesALaterCopyOfItsTransaction(includesStatus: Bool) throws {
        let b = SubscriptionLifecycles.earlyFailureThenAppPosts(includesStatus: includesStatus)
        let state = try fold(b)
        #expect(state.status == .gracePeriod)
        #expect(state.entitled)
        let expiry = try #require(state.expiresAt)
        #expect(state.gracePeriodExpiresAt == expiry.adding(milliseconds: 16 * day))
        // Every order of the same facts, the incremental fold's too (CoreIncrementalFoldTests), gives this row.
        for permutation in [b.facts.reversed(), b.facts.shuffled()] {
            #expect(SubscriptionProjection.fold(Array(permutation)) == state)
        }
        // A recovery, a new transaction, ends it.
        var recovered = b
        recovered.advance(by: day)
        recovered.recover()
        #expect(try fold(recovered).status == .active)
    }

    /// A failed renewal without grace: billing retry, not entitled.
    @Test(arguments: [true, false])
    func billingRetryWithoutGrace(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(includesStatus: includesStatus)
        b.subscribe()
        b.failToRenew()
        let state = try fold(b)
        #expect(state.status == .billingRetry)
        #expect(!state.entitled)
    }

    /// buy → upgrade (new product now) → refund (revoked) → reversal (active again, same product).
    @Test(arguments: [true, false])
    func upgradeRefundReversed(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "3000", productID: "com.example.basic", includesStatus: includesStatus)
        b.subscribe()
        b.advance(by: 10 * day)
        let upgradedAt = b.now
        b.upgrade(to: "com.example.premium", price: 19_990)
        let upgraded = try fold(b)
        #expect(upgraded.status == .active)
        #expect(upgraded.productID == "com.example.premium")
        #expect(upgraded.autoRenewProductID == "com.example.premium")
        #expect(upgraded.price == 19_990)
        #expect(upgraded.latestTransactionID == "3002")
        #expect(upgraded.purchasedAt.map { $0 >= upgradedAt } == true)

        b.advance(by: 2 * day)
        let refundedAt = b.now
        b.refund(reason: .appIssue)
        let refunded = try fold(b)
        #expect(refunded.status == .revoked)
        #expect(!refunded.entitled)
        #expect(refunded.revokedAt == refundedAt)
        #expect(refunded.revocationReason == .appIssue)
        #expect(refunded.revocationType == .refundFull)
        #expect(refunded.productID == "com.example.premium")

        b.advance(by: 3 * day)
        b.reverseRefund()
        let restored = try fold(b)
        #expect(restored.status == .active)
        #expect(restored.entitled)
        #expect(restored.revokedAt == nil)
        #expect(restored.revocationReason == nil)
        #expect(restored.productID == "com.example.premium")
        #expect(restored.expiresAt == refunded.expiresAt)
    }

    /// buy → renew → the app posts the renewal re-signed as upgraded before the new transaction is known: the renewal
    /// stays current (its product, its expiry: entitled), not the first period, which has lapsed. Before, the rows
    /// fell back to the first period and answered "expired". Once the new transaction arrives, it is current.
    @Test(arguments: [true, false])
    func anUpgradeWhoseSuccessorIsNotKnownYetKeepsTheCurrentPeriod(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "3500", productID: "com.example.basic", includesStatus: includesStatus)
        b.subscribe()
        b.renew()
        let renewal = b.current
        b.advance(by: 10 * day)
        b.appPostsUpgradedTransaction()
        let awaiting = try fold(b)
        #expect(awaiting.latestTransactionID == renewal.transactionID)
        #expect(awaiting.expiresAt == renewal.expiresDate)
        #expect(awaiting.productID == "com.example.basic")
        #expect(awaiting.status == .active)
        #expect(awaiting.entitled)

        b.upgrade(to: "com.example.premium", price: 19_990)
        let upgraded = try fold(b)
        #expect(upgraded.productID == "com.example.premium")
        #expect(upgraded.latestTransactionID == b.current.transactionID)
        #expect(upgraded.latestTransactionID != renewal.transactionID)
        #expect(upgraded.entitled)
    }

    /// A reversal after the period ended restores expired, not active.
    @Test func refundReversedAfterExpiryRestoresExpired() throws {
        var b = SubscriptionLifecycleBuilder(includesStatus: false)
        b.subscribe()
        b.refund()
        b.advanceToExpiry(plus: day)
        b.reverseRefund()
        let state = try fold(b)
        #expect(state.status == .expired)
        #expect(state.revokedAt == nil)
    }

    /// A reversal wins even if its nested transaction still shows the revocation.
    @Test func refundReversedWithStaleTransactionStillRestores() throws {
        // The reversal notification carries a transaction still showing the revocation: the reversal, signed
        // later, wins anyway.
        var b = SubscriptionLifecycleBuilder(includesStatus: false)
        b.subscribe()
        b.refund()
        var facts = b.facts
        guard case .notification(let refund) = facts.last!, let refunded = refund.transaction else {
            Issue.record("no refund notification")
            return
        }
        b.reverseRefund()
        guard case .notification(var reversal) = b.facts.last! else {
            Issue.record("no notification")
            return
        }
        reversal.transaction = refunded
        facts.append(.notification(reversal))
        let state = try #require(SubscriptionProjection.fold(facts))
        #expect(state.status == .active)
        #expect(state.revokedAt == nil)
    }

    /// A family-shared subscription whose sharing is revoked.
    @Test(arguments: [true, false])
    func familyRevoke(includesStatus: Bool) throws {
        let state = try fold(SubscriptionLifecycles.familyRevoke(includesStatus: includesStatus))
        #expect(state.ownership == .familyShared)
        #expect(state.status == .revoked)
        #expect(!state.entitled)
        #expect(state.revocationType == .familyRevoke)
        #expect(state.revokedAt != nil)
    }

    /// Offer code → price increase pending → accepted → renewal at the new price without the offer.
    @Test(arguments: [true, false])
    func offerPriceIncreaseRenew(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "5000", includesStatus: includesStatus)
        b.redeemOffer(.initialBuy, offerType: .offerCode, offerID: "SPRING")
        let redeemed = try fold(b)
        #expect(redeemed.status == .active)
        #expect(redeemed.offerType == .offerCode)
        #expect(redeemed.offerID == "SPRING")
        #expect(redeemed.price == 0)

        b.priceIncrease(.pending, newPrice: 12_990)
        #expect(try fold(b).priceIncreaseStatus == .noResponse)
        b.priceIncrease(.accepted, newPrice: 12_990)
        let accepted = try fold(b)
        #expect(accepted.priceIncreaseStatus == .consented)
        #expect(accepted.status == .active)

        b.renew()
        let renewed = try fold(b)
        #expect(renewed.status == .active)
        #expect(renewed.offerType == nil)
        #expect(renewed.offerID == nil)
        #expect(renewed.price == 12_990)
        #expect(renewed.latestTransactionID == "5002")
    }

    /// A pending downgrade keeps the product until renewal; cancelling it restores the renewal product.
    @Test(arguments: [true, false])
    func downgradePendingKeepsProduct(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(productID: "com.example.premium", includesStatus: includesStatus)
        b.subscribe()
        b.downgrade(to: "com.example.basic")
        let pending = try fold(b)
        #expect(pending.productID == "com.example.premium")
        #expect(pending.autoRenewProductID == "com.example.basic")
        #expect(pending.status == .active)

        var cancelled = b
        cancelled.cancelDowngrade()
        #expect(try fold(cancelled).autoRenewProductID == "com.example.premium")

        b.renew()
        let renewed = try fold(b)
        #expect(renewed.productID == "com.example.basic")
        #expect(renewed.autoRenewProductID == "com.example.basic")
    }

    /// Extension, billing retry, EXPIRED/BILLING_RETRY, then resubscription.
    @Test(arguments: [true, false])
    func billingRetryExpireResubscribe(includesStatus: Bool) throws {
        var b = SubscriptionLifecycleBuilder(originalTransactionID: "7000", environment: .production, includesStatus: includesStatus)
        b.subscribe()
        let expiry = b.current.expiresDate!
        b.extendRenewal(by: 5 * day)
        #expect(try fold(b).expiresAt == expiry.adding(milliseconds: 5 * day))
        b.failToRenew()
        b.advance(by: 10 * day)
        b.expire(.billingRetry)
        let expired = try fold(b)
        #expect(expired.status == .expired)
        #expect(expired.expirationIntent == .billingError)
        #expect(expired.environment == .production)

        let final = try fold(SubscriptionLifecycles.billingRetryExpireResubscribe(includesStatus: includesStatus))
        #expect(final.status == .active)
        #expect(final.entitled)
        #expect(final.expirationIntent == nil)
        #expect(final.latestTransactionID == "7002")
    }

    /// With or without data.status, every lifecycle ends in the same state.
    @Test func statusAndTypeImpliedAgree() throws {
        for (name, _, withStatus) in SubscriptionLifecycles.all(includesStatus: true) {
            let without = SubscriptionLifecycles.all(includesStatus: false).first { $0.name == name }!.builder
            #expect(SubscriptionProjection.fold(withStatus.facts) == SubscriptionProjection.fold(without.facts), "\(name)")
        }
    }

    /// EXPIRED signed after DID_RENEW wins whatever the arrival order.
    @Test func expiredSignedAfterRenewalWins() throws {
        var b = SubscriptionLifecycleBuilder()
        b.subscribe()
        b.renew()
        b.expire()
        // Any order: EXPIRED is signed last.
        let state = try #require(SubscriptionProjection.fold(b.facts.reversed()))
        #expect(state.status == .expired)
    }

    /// A late, freshly signed old renewal never rolls the period back.
    @Test func lateOldRenewalDoesNotRollBackExpiry() throws {
        var b = SubscriptionLifecycleBuilder()
        b.subscribe()
        b.renew()
        var old = b.current  // period 2
        b.renew()
        b.renew()
        // The app posts the period-2 transaction, freshly signed, long after period 4 started.
        old.signedDate = b.now
        let facts = b.facts + [.transaction(old)]
        let state = try #require(SubscriptionProjection.fold(facts))
        #expect(state.latestTransactionID == b.current.transactionID)
        #expect(state.expiresAt == b.current.expiresDate)
        #expect(state.status == .active)
    }

    /// An app-posted renewal ends billing retry before DID_RENEW arrives.
    @Test func appPostedRenewalBeforeItsNotification() throws {
        var b = SubscriptionLifecycleBuilder()
        b.subscribe()
        b.failToRenew()
        var facts = b.facts
        b.advance(by: 2 * day)
        b.recover()
        b.appPostsCurrentTransaction()
        facts.append(b.facts.last!)  // the app's post arrived; the DID_RENEW has not yet
        let state = try #require(SubscriptionProjection.fold(facts))
        #expect(state.status == .active)
        #expect(state.latestTransactionID == b.current.transactionID)
    }

    /// A refund of an older period leaves the current period entitled.
    @Test func refundOfAnOlderPeriodDoesNotRevokeTheCurrentOne() throws {
        var b = SubscriptionLifecycleBuilder(includesStatus: false)
        b.subscribe()
        var first = b.current
        b.renew()
        let notification = b.facts.count
        // Apple refunds period 1 while period 2 runs.
        first.revocationDate = b.now
        first.revocationReason = .other
        first.signedDate = b.now
        var payload = NotificationPayload()
        payload.notificationType = .refund
        payload.notificationUUID = "refund-old"
        payload.signedDate = b.now
        payload.data = NotificationData()
        payload.data?.environment = .sandbox
        let facts = b.facts + [.notification(NotificationFact(payload: payload, transaction: first))]
        #expect(facts.count == notification + 1)
        let state = try #require(SubscriptionProjection.fold(facts))
        #expect(state.status == .active)
        #expect(state.revokedAt == nil)
    }

    /// A row whose current transaction carries no token takes the token of the latest purchase that carries one: a
    /// late refund of an older period re-signs that period with its older token, and must not hand the row (and its
    /// owner, where no link names one) back to the first user. Folded whole and merged fact by fact in signing order.
    @Test(arguments: [true, false])
    func aLateFactAboutAnOlderPeriodKeepsTheLatestPurchasesToken(includesStatus: Bool) throws {
        let b = SubscriptionLifecycles.tokenOfAnEarlierPeriodRefundedLate(includesStatus: includesStatus)
        #expect(b.current.appAccountToken == nil)
        let state = try fold(b)
        #expect(state.status == .active)
        #expect(state.appAccountToken == SubscriptionLifecycles.secondUsersToken)
        let key = SubscriptionKey(environment: .sandbox, originalTransactionID: "8000")
        var merged = SubscriptionFoldState(key: key)
        var row: SubscriptionState?
        for fact in b.facts {
            let next = try #require(SubscriptionProjection.merge([fact], into: merged))
            (row, merged) = (next.row, next.state)
        }
        #expect(row?.appAccountToken == SubscriptionLifecycles.secondUsersToken)
    }

    /// A renewal info alone still makes a (partial) row.
    @Test func renewalInfoAloneMakesARow() throws {
        var renewal = RenewalInfoPayload()
        renewal.originalTransactionID = "9"
        renewal.environment = .production
        renewal.productID = "p"
        renewal.autoRenewStatus = .off
        renewal.signedDate = 10
        let state = try #require(SubscriptionProjection.fold([.renewalInfo(renewal)]))
        #expect(state.productID == "p")
        #expect(state.autoRenew == false)
        #expect(state.status == .active)
    }

    /// foldAll and fold(_:key:) keep subscriptions apart and ignore purchases.
    @Test func foldAllSeparatesSubscriptionsAndEnvironments() throws {
        let a = SubscriptionLifecycles.renewThenExpire()
        let b = SubscriptionLifecycles.graceThenRecover()
        let c = SubscriptionLifecycles.billingRetryExpireResubscribe()
        var purchases = PurchaseLifecycleBuilder()
        purchases.buy("coins", type: .consumable)
        let all = SubscriptionProjection.foldAll(a.facts + b.facts + c.facts + purchases.facts)
        #expect(all.count == 3)
        #expect(all[SubscriptionKey(environment: .sandbox, originalTransactionID: "1000")] == SubscriptionProjection.fold(a.facts))
        #expect(all[SubscriptionKey(environment: .production, originalTransactionID: "7000")]?.status == .active)
        #expect(SubscriptionProjection.fold(a.facts + b.facts, key: b.facts[0].subscriptionKey!) == SubscriptionProjection.fold(b.facts))
        #expect(SubscriptionProjection.fold(purchases.facts) == nil)
    }
}
