import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerVerification
import Testing

/// Long histories verify end to end: every notification of a 60-renewal monthly, a 156-renewal weekly and a
/// 19-renewal yearly lifecycle, signed by a freshly minted development CA and dated to end now, passes the
/// verifier — INITIAL_BUY, five to twenty years back, included (`bench/drain --signed 20000 --renewals 60` had every
/// INITIAL_BUY rejected: the CA was valid only five years back).
@Suite("Simulation: long histories verify end to end")
struct SimulationLongHistoryTests {
    @Test(
        "every notification of a long history verifies, its first INITIAL_BUY included",
        arguments: [(LifecycleSetup.month, 60), (LifecycleSetup.week, 156), (LifecycleSetup.year, 19)])
    func longHistoriesVerify(period: Int64, renewals: Int) async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let plan = SimulationPlan(
                selection: .lifecycle(.renewals), subscriptions: 3, shuffle: true, seed: 42,
                bundleID: BundleID(SimulationFixtures.bundleID), appAppleID: SimulationFixtures.appAppleID,
                period: period, renewals: renewals, now: Timestamp(Date()))
            try ca.requireCovers(try plan.signedDateRange())
            let deliveries = try plan.deliveries(signer: NotificationSigner(signer: ca.signer()))
            #expect(deliveries.count == 3 * (renewals + 3))
            let verifier = try SimulationFixtures.verifier(trusting: ca.rootDER)
            var verified: [String: Int] = [:]
            for delivery in deliveries {
                let notification = try await verifier.verifyNotification(delivery.notification.signedPayload)
                #expect(notification.transaction != nil && notification.renewalInfo != nil)
                verified[delivery.notification.label, default: 0] += 1
            }
            #expect(verified["SUBSCRIBED/INITIAL_BUY"] == 3)
            #expect(verified["DID_RENEW"] == 3 * renewals)
            #expect(verified["EXPIRED/VOLUNTARY"] == 3)
            let first = try #require(deliveries.compactMap(\.notification.signedDate).min())
            let span = Double(period) * Double(renewals + 1) / 1000
            #expect(first.date < Date().addingTimeInterval(-span + 86_400), "the history reaches back \(renewals + 1) periods")
        }
    }
}
