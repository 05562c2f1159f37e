import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Seed 002's iOS code, unchanged: it posts `{transactionId, productId, revoked}` to `/api/iap/validate` with no
/// credentials. On by default (`IAP_VALIDATE_ANONYMOUS=false`: 401): the transaction alone is looked up at the fake
/// App Store Server API, appended to the log linked to no user, and callers are rate-limited per client address.
@Suite("App API: seed 002's anonymous validate")
struct AnonymousValidateTests {
    /// The PKI `AppStoreRoutesTests.appleTransaction` signs with.
    static let pki = AppStoreRoutesTests.pki
    static let product = "com.example.storeledger.monthly"
    /// A pinned clock: the limiter's buckets never refill during a test.
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// Runs `body` against the app API wired to a fake App Store Server API, with or without the anonymous mode.
    func withAPI(
        anonymous: AnonymousValidation?, live: Bool = false,
        _ body: @Sendable (AppAPIHarness, FakeAppStoreServer, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1))
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: client, now: { Self.now }, anonymousValidation: anonymous)
                try await harness.app.test(live ? .live : .router) { http in try await body(harness, fake, http) }
            }
        }
    }

    /// A seed-002 POST without credentials.
    static func post(
        _ http: any TestClientProtocol, _ path: String = "/api/iap/validate", body: Data, forwardedFor: String? = nil
    ) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let forwardedFor { headers[HTTPField.Name("X-Forwarded-For")!] = forwardedFor }
        return try await http.execute(uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body))
    }

    static func data(_ response: TestResponse) -> Data { Data(response.body.readableBytesView) }

    @Test("off (the default): both routes answer 401 to a caller without credentials, and Apple is not asked")
    func offByDefault() async throws {
        try await withAPI(anonymous: nil) { harness, fake, http in
            for path in ["/api/iap/validate", "/api/iap/validate/sand"] {
                let response = try await Self.post(http, path, body: try SeedIAPClient.body(transactionId: "9000", productId: Self.product))
                #expect(response.status == .unauthorized)
                #expect(try AppAPIHarness.json(response)["code"] as? String == "unauthenticated")
            }
            #expect(await fake.state.requests.isEmpty)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events") == 0)
        }
    }

    @Test("on: the seed's unchanged request is answered for the transaction alone, logged with no user, linked to no one")
    func answersTheSeedsClientWithoutCredentials() async throws {
        try await withAPI(anonymous: AnonymousValidation()) { harness, fake, http in
            await fake.state.addTransaction(try AppStoreRoutesTests.appleTransaction("9100"), id: "9100", environment: .sandbox)
            let response = try await Self.post(http, body: try SeedIAPClient.body(transactionId: "9100", productId: Self.product))
            #expect(response.status == .ok, "\(String(buffer: response.body))")
            let answer = try SeedIAPClient.decode(SeedIAPClient.ValidateResponse.self, Self.data(response))
            #expect(answer.isUnlocked)
            #expect(!answer.revoked)
            #expect(answer.transactionId == "9100")
            #expect(answer.originalTransactionId == "9100")
            #expect(answer.environment == "Sandbox")
            #expect(answer.productId == Self.product)
            // Verified through the App Store Server API as with credentials: production first, then the sandbox.
            #expect(await fake.state.transactionInfoRequests.map(\.environment) == [.production, .sandbox])
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'server_api' AND user_id IS NULL") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE user_id IS NOT NULL") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM event_queue WHERE state = 'done'") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links") == 0)
            // The id with a line break after it (copied from a log or a text field) is the same id.
            let padded = try await Self.post(http, body: try SeedIAPClient.body(transactionId: " 9100\n", productId: Self.product))
            let again = try SeedIAPClient.decode(SeedIAPClient.ValidateResponse.self, Self.data(padded))
            #expect(again.isUnlocked && again.transactionId == "9100")
        }
    }

    @Test("on: the seed's other body (no revoked), the sandbox route, and a transaction Apple does not know — never a null")
    func otherShapesAndNotFound() async throws {
        try await withAPI(anonymous: AnonymousValidation()) { _, fake, http in
            await fake.state.addTransaction(try AppStoreRoutesTests.appleTransaction("9200"), id: "9200", environment: .sandbox)
            let sandbox = try await Self.post(
                http, "/api/iap/validate/sand", body: try SeedIAPClient.dictionaryBody(transactionId: "9200", productId: Self.product))
            #expect(sandbox.status == .ok)
            #expect(try SeedIAPClient.decode(SeedIAPClient.ValidateResponse.self, Self.data(sandbox)).isUnlocked)
            #expect(await fake.state.transactionInfoRequests.map(\.environment) == [.sandbox])

            let unknown = try await Self.post(http, body: try SeedIAPClient.body(transactionId: "9299", productId: Self.product, revoked: true))
            #expect(unknown.status == .ok)
            let answer = try SeedIAPClient.decode(SeedIAPClient.ValidateResponse.self, Self.data(unknown))
            #expect(!answer.isUnlocked && !answer.revoked)
            #expect(answer.transactionId == "9299" && answer.productId == Self.product)
            #expect(answer.originalTransactionId == nil && answer.environment == nil, "what Apple does not know is left out")

            let missing = try await Self.post(http, body: Data(#"{"productId":"p"}"#.utf8))
            #expect(missing.status == .badRequest)
            #expect(try SeedIAPClient.decode(SeedIAPClient.ErrorResponse.self, Self.data(missing)).error == "transactionId and productId required")
        }
    }

    @Test("on: credentials, when sent, still link the purchase to their user; bad credentials are still 401")
    func credentialsStillCount() async throws {
        try await withAPI(anonymous: AnonymousValidation(perClientPerMinute: 1)) { harness, fake, http in
            await fake.state.addTransaction(try AppStoreRoutesTests.appleTransaction("9300"), id: "9300", environment: .sandbox)
            let headers = try await AppAPIHarness.headers(user: "pat")
            for _ in 0..<3 {  // more than the anonymous allowance: signed-in callers are not limited
                let response = try await http.execute(
                    uri: "/api/iap/validate", method: .post, headers: headers,
                    body: ByteBuffer(bytes: try SeedIAPClient.body(transactionId: "9300", productId: Self.product)))
                #expect(response.status == .ok)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'pat'") == 1)
            let forged = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: [.authorization: "Bearer not.a.token", .contentType: "application/json"],
                body: ByteBuffer(bytes: try SeedIAPClient.body(transactionId: "9300", productId: Self.product)))
            #expect(forged.status == .unauthorized)
        }
    }

    @Test("on: after N requests one address gets 429 with Retry-After and the usual JSON error, while another is still served")
    func rateLimitedPerClientAddress() async throws {
        let anonymous = AnonymousValidation(perClientPerMinute: 3, trustedProxies: [IPAddressRange("127.0.0.1")!, IPAddressRange("::1")!])
        try await withAPI(anonymous: anonymous, live: true) { harness, fake, http in
            let body = try SeedIAPClient.body(transactionId: "9400", productId: Self.product)
            for _ in 0..<3 {
                #expect(try await Self.post(http, body: body, forwardedFor: "203.0.113.7").status == .ok)
            }
            let asked = await fake.state.requests.count
            let limited = try await Self.post(http, body: body, forwardedFor: "203.0.113.7")
            #expect(limited.status == .tooManyRequests)
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...60).contains(retryAfter))
            let error = try AppAPIHarness.json(limited)
            #expect(error["code"] as? String == "rate_limited")
            #expect((error["error"] as? String)?.isEmpty == false)
            #expect(await fake.state.requests.count == asked, "a limited request never reaches Apple")
            let document = try OpenAPIDocument.load()
            let documented = try #require(document.responseSchema(path: "/api/iap/validate", method: "POST", status: 429))
            #expect(document.violations(of: try JSONSerialization.jsonObject(with: Self.data(limited)), against: documented) == [])
            // The /sand route shares the allowance.
            #expect(try await Self.post(http, "/api/iap/validate/sand", body: body, forwardedFor: "203.0.113.7").status == .tooManyRequests)
            // Another client behind the same proxy is still served.
            #expect(try await Self.post(http, body: body, forwardedFor: "198.51.100.9").status == .ok)
            // A client naming a chain of proxies is keyed by the address the trusted proxy saw.
            #expect(try await Self.post(http, body: body, forwardedFor: "10.9.9.9, 203.0.113.7").status == .tooManyRequests)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE user_id IS NOT NULL") == 0)
        }
    }

    @Test("X-Forwarded-For from a peer that is not a trusted proxy is ignored: spoofing it does not reset the allowance")
    func forwardedForIsIgnoredFromUntrustedPeers() async throws {
        try await withAPI(anonymous: AnonymousValidation(perClientPerMinute: 2), live: true) { _, _, http in
            let body = try SeedIAPClient.body(transactionId: "9500", productId: Self.product)
            #expect(try await Self.post(http, body: body, forwardedFor: "203.0.113.1").status == .ok)
            #expect(try await Self.post(http, body: body, forwardedFor: "203.0.113.2").status == .ok)
            #expect(try await Self.post(http, body: body, forwardedFor: "203.0.113.3").status == .tooManyRequests)
        }
    }

    @Test("the limiter: a per-client bucket that refills, a total for everyone, and a Retry-After that is honest")
    func limiterBuckets() {
        let limiter = ClientRateLimiter(perClient: 2, total: 3)
        let start = Self.now
        #expect(limiter.acquire("a", now: start) == .allowed)
        #expect(limiter.acquire("a", now: start) == .allowed)
        #expect(limiter.acquire("a", now: start) == .limited(retryAfterSeconds: 30), "2 per minute: one more in 30 s")
        #expect(limiter.acquire("b", now: start) == .allowed)
        #expect(limiter.acquire("c", now: start) == .limited(retryAfterSeconds: 20), "the total of 3 per minute is spent")
        #expect(limiter.acquire("a", now: start.addingTimeInterval(30)) == .allowed, "refilled after Retry-After")
        #expect(limiter.acquire("a", now: start.addingTimeInterval(-600)) != .allowed, "a clock going back earns nothing")
    }

    @Test("client addresses: the peer unless it is a trusted proxy; IPv6 clients are keyed by their /64")
    func clientAddresses() throws {
        let peer = try SocketAddress(ipAddress: "10.0.0.5", port: 443)
        let forwarded: HTTPFields = [HTTPField.Name("X-Forwarded-For")!: "198.51.100.1, 203.0.113.9, 10.0.0.7"]
        #expect(ClientAddressResolver().clientAddress(peer: peer, headers: forwarded) == "10.0.0.5")
        let behindProxies = ClientAddressResolver(trustedProxies: [IPAddressRange("10.0.0.0/8")!])
        #expect(behindProxies.clientAddress(peer: peer, headers: forwarded) == "203.0.113.9")
        #expect(behindProxies.clientAddress(peer: peer, headers: [:]) == "10.0.0.5")
        #expect(behindProxies.clientAddress(peer: nil, headers: forwarded) == nil)
        // A port after the address (Azure Application Gateway's default) is dropped, not the entry: before, the entry
        // was skipped, so the gateway's address was recorded, and the client's own first entry believed.
        func resolved(_ header: String) -> String? {
            behindProxies.clientAddress(peer: peer, headers: [HTTPField.Name("X-Forwarded-For")!: header])
        }
        #expect(resolved("17.1.2.3:51234") == "17.1.2.3")
        #expect(resolved("198.51.100.1, 17.1.2.3:51234, 10.0.0.7") == "17.1.2.3")
        #expect(resolved("[2001:db8::1]:443") == "2001:db8::1")
        #expect(resolved("2001:db8::1") == "2001:db8::1")
        // An entry that is no address ends the walk: what the sender wrote left of it is not believed.
        #expect(resolved("198.51.100.1, unknown, 10.0.0.7") == "10.0.0.7")
        #expect(resolved("198.51.100.1, unknown") == "10.0.0.5")
        #expect(ClientAddressResolver.limitKey("2001:db8:1:2:aaaa::1") == ClientAddressResolver.limitKey("2001:db8:1:2:bbbb::2"))
        #expect(ClientAddressResolver.limitKey("2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(ClientAddressResolver.limitKey("2001:db8:1:3::1") != ClientAddressResolver.limitKey("2001:db8:1:2::1"))
        #expect(ClientAddressResolver.limitKey("::ffff:203.0.113.9") == "203.0.113.9")
        #expect(IPAddressRange("2001:db8::/32")!.contains("2001:db8:ffff::1"))
        #expect(!IPAddressRange("2001:db8::/32")!.contains("2001:db9::1"))
        #expect(IPAddressRange("192.168.1.0/23")!.contains("192.168.0.200"))
        #expect(IPAddressRange("not an address") == nil && IPAddressRange("10.0.0.0/33") == nil)
    }
}
