import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// One deployment accepting two apps (`APPS`), each app's users served by an app-facing API of its own
/// (`APP_API_BUNDLE_ID`): user ids are each app's own, so what a user holds is read from the API's app only, and a
/// transaction of the other app posted to it is refused, never linked to this app's user.
@Suite("App API: one ledger of several apps")
struct MultipleAppsTests {
    static let pki = try! TestPKI()
    static let first = AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)
    static let second = AppIdentity(bundleID: "com.example.other", appAppleID: 5_678)

    /// The API of `app` over `db`, in a deployment accepting both apps.
    static func api(_ db: TestDatabase, for app: AppIdentity) async throws -> AppAPIHarness {
        try await AppAPIHarness(db, pki: pki, apps: [first, second], app: app.bundleID)
    }

    /// `GET /api/v1/payments/appstore/status` of `user` (seed 000).
    static func status(_ client: any TestClientProtocol, user: String) async throws -> [String: Any] {
        try AppAPIHarness.json(
            try await client.execute(uri: "/api/v1/payments/appstore/status", method: .get, headers: try await AppAPIHarness.headers(user: user)))
    }

    /// `GET /v1/users/{user}/entitlements` (an app's server).
    static func entitlements(_ client: any TestClientProtocol, user: String) async throws -> [String: Any] {
        try AppAPIHarness.json(
            try await client.execute(uri: "/v1/users/\(user)/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders))
    }

    /// Posts `jws` as `user`'s transaction (seed 000).
    static func post(_ client: any TestClientProtocol, _ jws: String, as user: String) async throws -> TestResponse {
        try await client.execute(
            uri: "/api/v1/payments/appstore/transaction", method: .post, headers: try await AppAPIHarness.headers(user: user),
            body: try AppAPIHarness.body(["signed_transaction": jws]))
    }

    @Test func eachAppsUsersHoldThatAppsPurchasesOnly() async throws {
        try await TestDatabase.withFresh { db in
            let firstAPI = try await Self.api(db, for: Self.first)
            let secondAPI = try await Self.api(db, for: Self.second)
            // User "42" of the second app subscribes there.
            try await secondAPI.app.test(.router) { client in
                let posted = try await Self.post(client, try secondAPI.subscription("7100"), as: "42")
                #expect(posted.status == .ok, "\(String(buffer: posted.body))")
                #expect(try AppAPIHarness.json(posted)["is_premium"] as? Bool == true)
                #expect(try await Self.status(client, user: "42")["has_subscription"] as? Bool == true)
                let rows = try #require(try await Self.entitlements(client, user: "42")["entitlements"] as? [[String: Any]])
                #expect(rows.map { $0["bundle_id"] as? String } == [Self.second.bundleID])
            }
            // User "42" of the first app is someone else: nothing of the second app's unlocks them.
            try await firstAPI.app.test(.router) { client in
                let status = try await Self.status(client, user: "42")
                #expect(status["has_subscription"] as? Bool == false, "\(status)")
                let entitlements = try await Self.entitlements(client, user: "42")
                #expect(entitlements["is_premium"] as? Bool == false)
                #expect((entitlements["entitlements"] as? [Any])?.isEmpty == true, "\(entitlements)")
                // The second app's transaction posted to the first app's API is refused, and links nobody here.
                let foreign = try await Self.post(client, try secondAPI.subscription("7200"), as: "43")
                #expect(foreign.status == .unprocessableContent, "\(String(buffer: foreign.body))")
                #expect(try AppAPIHarness.json(foreign)["code"] as? String == "invalid_signed_transaction")
                #expect(try await Self.status(client, user: "43")["has_subscription"] as? Bool == false)
                // The first app's own purchase entitles its user "42", and only that row is theirs here.
                let own = try await Self.post(client, try firstAPI.subscription("7300"), as: "42")
                #expect(own.status == .ok, "\(String(buffer: own.body))")
                #expect(try await Self.status(client, user: "42")["has_subscription"] as? Bool == true)
                let rows = try #require(try await Self.entitlements(client, user: "42")["entitlements"] as? [[String: Any]])
                #expect(rows.map { $0["bundle_id"] as? String } == [Self.first.bundleID])
            }
            try await secondAPI.app.test(.router) { client in
                let rows = try #require(try await Self.entitlements(client, user: "43")["entitlements"] as? [[String: Any]])
                #expect(rows.isEmpty, "the refused post linked user 43: \(rows)")
            }
        }
    }
}
