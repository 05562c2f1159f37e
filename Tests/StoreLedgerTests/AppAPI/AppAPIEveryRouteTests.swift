import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// The cross-cutting promises, route by route: no credentials → 401 JSON; upstream rate limiting → 503; posting
/// the same thing again changes nothing.
@Suite("App API: every route")
struct AppAPIEveryRouteTests {
    static let pki = try! TestPKI()

    static let routes: [(HTTPRequest.Method, String)] = [
        (.post, "/api/v1/payments/appstore/transaction"), (.post, "/api/v1/payments/appstore/restore"),
        (.get, "/api/v1/payments/appstore/status"), (.post, "/api/v1/payments/appstore/verify"),
        (.post, "/api/iap/validate"), (.post, "/api/iap/validate/sand"),
        (.get, "/api/subscription/status"), (.post, "/api/subscription/sync"),
        (.get, "/v1/users/someone/entitlements"), (.post, "/v1/purchase-intents"), (.get, "/v1/purchase-intents/\(UUID())"),
    ]

    @Test func everyRouteRefusesCallersWithoutCredentialsAndTouchesNothing() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                for (method, path) in Self.routes {
                    let response = try await client.execute(
                        uri: path, method: method, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
                    #expect(response.status == .unauthorized, "\(method) \(path)")
                    let json = try AppAPIHarness.json(response)
                    #expect(json["code"] as? String == "unauthenticated", "\(method) \(path)")
                    #expect((json["error"] as? String)?.isEmpty == false)
                }
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 0)
        }
    }

    @Test func upstreamRateLimitingIsA503OnEveryRouteThatAsksApple() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 2))
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: appStore)
                await fake.state.addTransaction(
                    try AppStoreRoutesTests.appleTransaction("0", signer: TestSigner(pki: Self.pki)), id: "0", environment: .sandbox)
                try await harness.app.test(.router) { client in
                    let user = try await AppAPIHarness.headers(user: "sam")
                    let calls: [(String, [String: Any])] = [
                        ("/api/iap/validate", ["transactionId": "0", "productId": "p"]),
                        ("/api/iap/validate/sand", ["transactionId": "0", "productId": "p"]),
                        ("/api/subscription/sync", ["transactionId": "0"]),
                        ("/api/v1/payments/appstore/verify", ["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-with-transaction")]),
                    ]
                    for (path, body) in calls {
                        await fake.state.inject([.rateLimited(retryAfterSeconds: 0), .rateLimited(retryAfterSeconds: 0)])
                        let response = try await client.execute(uri: path, method: .post, headers: user, body: try AppAPIHarness.body(body))
                        #expect(response.status == .serviceUnavailable, "\(path)")
                        #expect(try AppAPIHarness.json(response)["code"] as? String == "upstream_rate_limited", "\(path)")
                    }
                }
                #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 0)
            }
        }
    }

    @Test func repeatingRestoreSyncAndReceiptChangesNothingButTheLog() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration())
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: appStore)
                await fake.state.addTransaction(
                    try AppStoreRoutesTests.appleTransaction("0", signer: TestSigner(pki: Self.pki)), id: "0", environment: .sandbox)
                let restore = try AppAPIHarness.body(["transactions": [try harness.subscription("9000"), try harness.nonConsumable("9001")]])
                try await harness.app.test(.router) { client in
                    let user = try await AppAPIHarness.headers(user: "tess")
                    let calls: [(String, ByteBuffer)] = [
                        ("/api/v1/payments/appstore/restore", restore),
                        ("/api/subscription/sync", try AppAPIHarness.body(["transactionId": "0"])),
                        (
                            "/api/v1/payments/appstore/verify",
                            try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-with-transaction")])
                        ),
                    ]
                    for (path, body) in calls {
                        let first = try await client.execute(uri: path, method: .post, headers: user, body: body)
                        let second = try await client.execute(uri: path, method: .post, headers: user, body: body)
                        #expect(first.status == .ok, "\(path)")
                        #expect(String(buffer: first.body) == String(buffer: second.body), "\(path)")
                    }
                }
                #expect(try await harness.count("SELECT count(*)::int8 FROM transactions") == 3)
                #expect(try await harness.count("SELECT count(*)::int8 FROM user_link_history") == 3)
                #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 8)
            }
        }
    }
}

extension AppAPIEveryRouteTests {
    @Test func unknownRoutesAndDatabaseFailuresAreJSONErrorsToo() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let unknown = try await client.execute(uri: "/api/v1/nothing-here", method: .get)
                #expect(unknown.status == .notFound)
                #expect(try AppAPIHarness.json(unknown)["code"] as? String == "not_found")
                try await db.client.query("ALTER TABLE user_links RENAME TO user_links_gone", logger: db.logger)
                let failing = try await client.execute(
                    uri: "/api/v1/payments/appstore/status", method: .get, headers: try await AppAPIHarness.headers(user: "u"))
                #expect(failing.status == .serviceUnavailable)
                let json = try AppAPIHarness.json(failing)
                #expect(json["code"] as? String == "storage_unavailable")
                #expect((json["error"] as? String)?.contains("user_links") == false)
            }
        }
    }
}

extension AppAPIEveryRouteTests {
    @Test func applesRoutesStayOpenWhenTheAppAPIIsMounted() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                for route in ReceiverController.routes {
                    let response = try await client.execute(
                        uri: route.path.description, method: .post, headers: [.contentType: "application/json"],
                        body: ByteBuffer(string: #"{"signedPayload":"a.b.c"}"#)
                    )
                    #expect(response.status == .ok, "\(route.path)")
                }
            }
            #expect(
                try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'apple_notification'") == ReceiverController.routes.count)
        }
    }
}
