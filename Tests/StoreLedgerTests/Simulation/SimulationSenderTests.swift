import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import StoreLedgerCore
import StoreLedgerSimulation
import Synchronization
import Testing

/// The sender POSTs Apple's body to a live local server and reports each answer.
@Suite("Simulation: sending to a live receiver")
struct SimulationSenderTests {
    @Test("every planned delivery is POSTed as {\"signedPayload\": …} and failures are counted")
    func postsToLiveServer() async throws {
        let received = Mutex<[String]>([])
        let router = Router()
        router.post("/notifications/apple/sandbox") { request, _ -> HTTPResponse.Status in
            let body = try await request.body.collect(upTo: 1 << 20)
            let object = try JSONSerialization.jsonObject(with: Data(String(buffer: body).utf8)) as? [String: String]
            let payload = object?["signedPayload"] ?? ""
            received.withLock { $0.append(payload) }
            return received.withLock { $0.count } == 2 ? .serviceUnavailable : .ok
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        let deliveries = try SimulationPlan(
            selection: .lifecycle(.refundReversal), seed: 1, bundleID: "com.example.storeledger", appAppleID: 1,
            now: 1_735_689_600_000
        ).deliveries(signer: NotificationSigner(signer: AppStoreJWSSigner(chain: try SigningChain())))

        try await app.test(.live) { client in
            let port = try #require(client.port)
            let sender = NotificationSender(target: try DeliveryTarget("http://127.0.0.1:\(port)/notifications/apple/sandbox"))
            var statuses: [Int?] = []
            let summary = await sender.deliver(deliveries, rate: 100) { index, _, outcome in
                #expect(index == statuses.count + 1)
                statuses.append(outcome.status)
            }
            #expect(statuses == [200, 503, 200])
            #expect(summary.sent == 3)
            #expect(summary.succeeded == 2)
            #expect(summary.failed == 1)
            #expect(summary.notifications == 3)
        }
        #expect(received.withLock { $0 } == deliveries.map(\.notification.signedPayload))
    }

    @Test("nothing listening: the first POST fails and the run stops instead of waiting out every timeout")
    func unreachableTarget() async throws {
        let deliveries = try SimulationPlan(
            selection: .lifecycle(.renewals), seed: 1, bundleID: "com.example.storeledger", appAppleID: 1,
            now: 1_735_689_600_000
        ).deliveries(signer: NotificationSigner(signer: AppStoreJWSSigner(chain: try SigningChain())))
        let sender = NotificationSender(
            target: try DeliveryTarget("http://127.0.0.1:9/notifications/apple/sandbox"), timeout: .seconds(1))
        let summary = await sender.deliver(deliveries)
        #expect(summary.sent == 1)
        #expect(summary.failed == 1)
        #expect(summary.unsent == deliveries.count - 1)
        #expect(summary.description.contains("not sent"))
    }
}
