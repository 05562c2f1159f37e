import Foundation
import Hummingbird
import HummingbirdTesting
import Metrics
import NIOCore
import Prometheus
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Observability: /metrics on the admin port only")
struct AdminPortTests {
    /// The process-wide registry (swift-metrics can be bootstrapped once; only this suite does it).
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
    static let pki = try! TestPKI()

    @Test func theAdminPortServesMetricsAndHealthAndThePublicPortDoesNotServeMetrics() async throws {
        let registry = Self.registry
        try await TestDatabase.withFresh { db in
            let migrator = Migrator(migrations: try Migration.bundled())
            // Work that moves the counters: a stored notification, a forged one processed by the real handler.
            let publicApp = Application(router: buildReceiverRouter(client: db.client, migrator: migrator, configuration: .underTest))
            try await publicApp.test(.router) { client in
                let response = try await client.execute(uri: "/metrics", method: .get)
                #expect(response.status == .notFound)
                _ = try await client.execute(
                    uri: "/notifications/apple", method: .post, headers: [.contentType: "application/json"],
                    body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                )
            }
            let pipeline = try LedgerPipeline(db, pki: Self.pki)
            let forged = TestSigner(pki: try TestPKI(), bundleID: "com.example.app")
            try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(try forged.signedNotification(type: "TEST"))"}"#)
            try await pipeline.drain()

            let admin = Application(
                router: AdminApplication.router(registry: registry, client: db.client, migrator: migrator, readinessTimeout: .seconds(60)))
            try await admin.test(.router) { client in
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.status == .ok)
                #expect(metrics.headers[.contentType]?.hasPrefix("text/plain") == true)
                let text = String(buffer: metrics.body)
                #expect(text.contains(#"storeledger_receiver_notifications_total{result="stored"}"#))
                #expect(text.contains(#"storeledger_verification_failures_total{reason="untrustedChain"}"#))
                #expect(
                    text.contains(
                        #"http_server_request_duration_bucket{http_route="/notifications/apple",http_request_method="POST",http_response_status_code="200""#
                    ))
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
                #expect(try await client.execute(uri: "/readyz", method: .get).status == .ok)
            }
        }
    }
}
