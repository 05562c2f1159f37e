import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerVerification
import Testing

/// Every simulated lifecycle yields notifications that verify with their nested payloads, carry fresh UUIDs and
/// increasing signed dates, and end no later than now; plans shuffle, duplicate and stay within their bounds.
@Suite("Simulation: lifecycles and plans")
struct SimulationLifecycleTests {
    /// The setup the suite plays lifecycles with.
    func setup(environment: AppStoreEnvironment = .sandbox) -> LifecycleSetup {
        LifecycleSetup(
            originalTransactionID: "2000000000005000", start: 1_735_689_600_000, environment: environment,
            bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID)
    }

    @Test("every lifecycle's notifications verify, nested transaction (and renewal info) included", arguments: SimulatedLifecycle.allCases)
    func everyLifecycleVerifies(_ lifecycle: SimulatedLifecycle) async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let now = Timestamp(Date())
            let notifications = try NotificationSigner(signer: ca.signer())
                .signNotifications(in: lifecycle.facts(setup(), endingAt: now))
            #expect(!notifications.isEmpty)
            let verifier = try SimulationFixtures.verifier(trusting: ca.rootDER)
            for notification in notifications {
                let verified = try await verifier.verifyNotification(notification.signedPayload)
                let transaction = try #require(verified.transaction, "\(notification.label)")
                let decoded = try JSONDecoder().decode(TransactionPayload.self, from: transaction.payloadJSON)
                #expect(decoded.transactionID == notification.transactionID)
                #expect(decoded.bundleID?.rawValue == SimulationFixtures.bundleID)
                #expect(decoded.environment == .sandbox)
                #expect((verified.renewalInfo != nil) == (lifecycle != .oneTimePurchase), "\(notification.label)")
                #expect(verified.claims.notificationType == notification.type?.rawValue)
            }
            let uuids = notifications.compactMap(\.notificationUUID?.rawValue)
            #expect(uuids.count == notifications.count)
            #expect(Set(uuids).count == uuids.count)
            #expect(uuids.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() })
            let dates = notifications.compactMap(\.signedDate)
            #expect(dates.count == notifications.count)
            #expect(zip(dates, dates.dropFirst()).allSatisfy { $0 < $1 }, "signed dates increase")
            #expect(dates.last == now.wholeMilliseconds, "the lifecycle ends now, in whole milliseconds as Apple signs")
            #expect(dates.allSatisfy { $0.isWholeMilliseconds })
        }
    }

    @Test("a Production lifecycle carries appAppleId and verifies on a Production verifier")
    func productionVerifies() async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let facts = SimulatedLifecycle.upgrade.facts(setup(environment: .production))
            let notifications = try NotificationSigner(signer: ca.signer()).signNotifications(in: facts)
            let verifier = try SimulationFixtures.verifier(trusting: ca.rootDER, environment: .production)
            for notification in notifications {
                let verified = try await verifier.verifyNotification(notification.signedPayload)
                #expect(verified.claims.appAppleID == SimulationFixtures.appAppleID)
            }
        }
    }

    @Test("a plan's renewals set how long the renewals lifecycle runs; out of range is an error")
    func renewalsMakeLongHistories() throws {
        let signer = NotificationSigner(signer: AppStoreJWSSigner(chain: try SigningChain()))
        func plan(renewals: Int) -> SimulationPlan {
            SimulationPlan(
                selection: .lifecycle(.renewals), subscriptions: 2, seed: 7,
                bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
                renewals: renewals, now: 1_735_689_600_000
            )
        }
        let deliveries = try plan(renewals: 36).deliveries(signer: signer)
        #expect(deliveries.count == 2 * (1 + 36 + 2))
        #expect(deliveries.filter { $0.notification.label.hasPrefix("DID_RENEW") }.count == 72)
        #expect(Set(deliveries.compactMap(\.notification.originalTransactionID)).count == 2)
        #expect(throws: SimulationError.self) { try plan(renewals: SimulationPlan.maximumRenewals + 1).validate() }
        #expect(throws: SimulationError.self) { try plan(renewals: -1).validate() }
    }

    @Test("the lifecycles play the notification types their names promise")
    func notificationTypes() {
        func labels(_ lifecycle: SimulatedLifecycle) -> [String] {
            lifecycle.facts(setup()).compactMap { fact -> String? in
                guard case .notification(let notification) = fact else { return nil }
                let type = notification.type?.rawValue ?? "?"
                return notification.subtype.map { "\(type)/\($0.rawValue)" } ?? type
            }
        }
        #expect(
            labels(.renewals) == [
                "SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "DID_RENEW", "DID_RENEW",
                "DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED", "EXPIRED/VOLUNTARY",
            ])
        #expect(
            labels(.gracePeriodRecovery) == [
                "SUBSCRIBED/INITIAL_BUY", "DID_FAIL_TO_RENEW/GRACE_PERIOD", "DID_RENEW/BILLING_RECOVERY",
            ])
        #expect(labels(.upgrade) == ["SUBSCRIBED/INITIAL_BUY", "DID_CHANGE_RENEWAL_PREF/UPGRADE", "DID_RENEW"])
        #expect(labels(.refundReversal) == ["SUBSCRIBED/INITIAL_BUY", "REFUND", "REFUND_REVERSED"])
        #expect(labels(.familyRevoke) == ["SUBSCRIBED/INITIAL_BUY", "DID_RENEW", "REVOKE"])
        #expect(
            labels(.offerPriceIncrease) == [
                "OFFER_REDEEMED/INITIAL_BUY", "PRICE_INCREASE/PENDING", "PRICE_INCREASE/ACCEPTED", "DID_RENEW",
            ])
        #expect(labels(.oneTimePurchase) == ["ONE_TIME_CHARGE"])
    }

    @Test("a plan of K subscriptions merges them in signing order with distinct original transaction ids")
    func planMergesSubscriptions() throws {
        let chain = try SigningChain()
        let plan = SimulationPlan(
            selection: .lifecycle(.gracePeriodRecovery), subscriptions: 4, seed: 7,
            bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
            now: Timestamp(Date()))
        let deliveries = try plan.deliveries(signer: NotificationSigner(signer: AppStoreJWSSigner(chain: chain)))
        #expect(deliveries.count == 12)
        #expect(Set(deliveries.compactMap(\.notification.originalTransactionID)).count == 4)
        let dates = deliveries.compactMap(\.notification.signedDate)
        #expect(dates == dates.sorted())
        #expect(deliveries.allSatisfy { !$0.isDuplicate })
    }

    @Test("duplicates resend the same bytes later; shuffling reorders; the same seed plans the same run")
    func duplicatesAndShuffle() throws {
        let signer = NotificationSigner(signer: AppStoreJWSSigner(chain: try SigningChain()))
        func plan(seed: UInt64, shuffle: Bool) throws -> [PlannedDelivery] {
            try SimulationPlan(
                selection: .lifecycle(.renewals), subscriptions: 10, shuffle: shuffle, duplicateRate: 0.5, seed: seed,
                bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
                now: 1_735_689_600_000
            ).deliveries(signer: signer)
        }
        let deliveries = try plan(seed: 42, shuffle: true)
        let originals = deliveries.filter { !$0.isDuplicate }
        let duplicates = deliveries.filter(\.isDuplicate)
        #expect(originals.count == 60)
        #expect(!duplicates.isEmpty)
        for duplicate in duplicates {
            let first = try #require(deliveries.firstIndex { $0.notification == duplicate.notification })
            #expect(!deliveries[first].isDuplicate, "the original comes first")
        }
        let dates = originals.compactMap(\.notification.signedDate)
        #expect(dates != dates.sorted(), "shuffled")
        let again = try plan(seed: 42, shuffle: true)
        #expect(again.map(\.notification.label) == deliveries.map(\.notification.label))
        #expect(again.map(\.notification.originalTransactionID) == deliveries.map(\.notification.originalTransactionID))
    }

    @Test("a random plan is bounded by its delivery limit and mixes lifecycles")
    func randomPlanIsBounded() throws {
        let signer = NotificationSigner(signer: AppStoreJWSSigner(chain: try SigningChain()))
        let deliveries = try SimulationPlan(
            selection: .random, deliveryLimit: 50, duplicateRate: 0.1, seed: 3,
            bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
            now: Timestamp(Date())
        ).deliveries(signer: signer)
        #expect(deliveries.count == 50)
        #expect(Set(deliveries.compactMap(\.notification.originalTransactionID)).count > 3)

        let unbounded = SimulationPlan(
            selection: .random, seed: 3, bundleID: "com.example.storeledger", appAppleID: 1, now: 0)
        #expect(throws: SimulationError.self) { try unbounded.validate() }
        var tooMany = unbounded
        tooMany.subscriptions = SimulationPlan.maximumSubscriptions + 1
        #expect(throws: SimulationError.self) { try tooMany.validate() }
    }
}
