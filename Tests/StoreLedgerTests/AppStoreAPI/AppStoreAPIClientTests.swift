import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import StoreLedgerAppStoreAPI
import StoreLedgerTestSupport
import Testing

@Suite("App Store Server API client against the fake, over real HTTP")
struct AppStoreAPIClientTests {
    static let pki = try! TestPKI()
    static let signer = TestSigner(pki: pki)
    let logger = Logger(label: "test")

    func signed(_ id: String, environment: String = "Sandbox") throws -> String {
        var signer = Self.signer
        signer.environment = environment
        return try signer.signedTransaction(signer.transactionPayload(transactionID: id))
    }

    @Test func getTransactionInfoWithAFreshAppleStyleTokenPerRequest() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let jws = try signed("1000", environment: "Production")
            await fake.state.addTransaction(jws, id: "1000", environment: .production)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            #expect(try await client.transactionInfo(transactionID: "1000", environment: .production, logger: logger) == jws)
            #expect(try await client.transactionInfo(transactionID: "1000", environment: .production, logger: logger) == jws)
            let tokens = await fake.state.receivedTokens
            #expect(tokens.count == 2)
            let header = try #require(try JSONSerialization.jsonObject(with: tokens[0].header) as? [String: Any])
            let claims = try #require(try JSONSerialization.jsonObject(with: tokens[0].claims) as? [String: Any])
            #expect(header["alg"] as? String == "ES256")
            #expect(header["kid"] as? String == fake.keyID)
            #expect(header["typ"] as? String == "JWT")
            #expect(claims["iss"] as? String == fake.issuerID)
            #expect(claims["aud"] as? String == "appstoreconnect-v1")
            #expect(claims["bid"] as? String == fake.bundleID)
            let iat = try #require(claims["iat"] as? Int)
            let exp = try #require(claims["exp"] as? Int)
            #expect(exp - iat == 300)
            #expect(abs(Double(iat) - Date().timeIntervalSince1970) < 60)
            #expect(await fake.state.requests.allSatisfy(\.authorized))
        }
    }

    @Test func productionNotFoundFallsBackToTheSandbox() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let jws = try signed("2000")
            await fake.state.addTransaction(jws, id: "2000", environment: .sandbox)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            let answer = try await client.transactionInfoAnyEnvironment(transactionID: "2000", logger: logger)
            #expect(answer.signedTransactionInfo == jws)
            #expect(answer.environment == .sandbox)
            #expect(await fake.state.requests.map(\.environment) == [.production, .sandbox])
        }
    }

    @Test func productionAnswering401BeforeTheFirstReleaseFallsBackToTheSandbox() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.setProductionUnreleased(true)
            await fake.state.addTransaction(try signed("2100"), id: "2100", environment: .sandbox)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            #expect(try await client.transactionInfoAnyEnvironment(transactionID: "2100", logger: logger).environment == .sandbox)
            await #expect {
                _ = try await client.transactionInfo(transactionID: "2100", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .unauthorized && ($0 as? AppStoreAPIError)?.httpStatus == 401 }
        }
    }

    /// An answer whose head comes at once and whose body then stalls ends the call within its timeout, as a timeout:
    /// AsyncHTTPClient's own timeout stops at the head, and its read timeout (90 s) restarts with every chunk.
    @Test func aBodyThatStallsAfterItsHeadEndsTheCallWithinItsTimeout() async throws {
        let router = Router()
        router.get("production/inApps/v1/transactions/:id") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: "{\"signedTransactionInfo\": \""))
                    try await Task.sleep(for: .seconds(30))
                    try await writer.finish(nil)
                })
        }
        try await Application(router: router).test(.live) { http in
            let configuration = AppStoreAPIConfiguration(
                issuerID: "issuer", keyID: "KEY", privateKeyPEM: P256Key.freshPEM(), bundleID: "com.example.app",
                productionURL: "http://127.0.0.1:\(http.port!)/production", sandboxURL: "http://127.0.0.1:\(http.port!)/sandbox",
                requestTimeout: .seconds(2), maximumAttempts: 1, initialBackoff: .milliseconds(5), maximumBackoff: .milliseconds(50))
            let client = try await AppStoreAPIClient(configuration: configuration)
            let start = ContinuousClock.now
            await #expect {
                _ = try await client.transactionInfo(transactionID: "2100", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .timeout }
            #expect(start.duration(to: .now) < .seconds(10), "\(start.duration(to: .now))")
        }
    }

    @Test func notFoundAnywhereIsATypedError() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            await #expect {
                _ = try await client.transactionInfoAnyEnvironment(transactionID: "404404", logger: logger)
            } throws: { error in
                guard let error = error as? AppStoreAPIError else { return false }
                return error.code == .transactionNotFound && error.appleErrorCode == 4_040_010 && error.httpStatus == 404
            }
        }
    }

    @Test func rateLimitingAndRetryableErrorsAreRetriedThenSucceed() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("3000", environment: "Production"), id: "3000", environment: .production)
            await fake.state.inject([.rateLimited(retryAfterSeconds: 0), .retryable, .rateLimited()])
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 4))
            _ = try await client.transactionInfo(transactionID: "3000", environment: .production, logger: logger)
            #expect(await fake.state.requests.count == 4)
        }
    }

    /// Apple's 5000000 (GeneralInternalError) is not retried at once, unlike 5000001 (GeneralInternalRetryableError):
    /// one request, and the error says so; a 500 without Apple's body is retried as before.
    @Test func apples5000000IsNotRetriedAtOnce() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("3050", environment: "Production"), id: "3050", environment: .production)
            await fake.state.inject([.init(status: 500, appleErrorCode: 5_000_000), .init(status: 500, appleErrorCode: nil)])
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 4))
            await #expect {
                _ = try await client.transactionInfo(transactionID: "3050", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .serverError && ($0 as? AppStoreAPIError)?.appleErrorCode == 5_000_000 }
            #expect(await fake.state.requests.count == 1)
            // The next lookup meets a 500 without Apple's body: retried, then answered.
            _ = try await client.transactionInfo(transactionID: "3050", environment: .production, logger: logger)
            #expect(await fake.state.requests.count == 3)
        }
    }

    @Test func persistentRateLimitingGivesUpAfterTheConfiguredAttempts() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("3100", environment: "Production"), id: "3100", environment: .production)
            await fake.state.inject(Array(repeating: .rateLimited(), count: 10))
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 3))
            await #expect {
                _ = try await client.transactionInfo(transactionID: "3100", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .rateLimited }
            #expect(await fake.state.requests.count == 3)
        }
    }

    /// Apple's `Retry-After` is "a UNIX time, in milliseconds" (Identifying rate limits), not a number of seconds; a proxy
    /// in between may still send HTTP's delay-seconds or HTTP-date.
    @Test func retryAfterIsReadAsAppleSendsItAndAsHTTPDoes() throws {
        let now = Date(timeIntervalSince1970: 1_780_000_000.250)
        #expect(AppStoreAPIClient.retryAfter("1780000001750", now: now) == .milliseconds(1_500))
        #expect(AppStoreAPIClient.retryAfter("1780003600250", now: now) == .seconds(3_600))
        #expect(AppStoreAPIClient.retryAfter("1779999999000", now: now) == .zero, "a time already past asks for no wait")
        #expect(AppStoreAPIClient.retryAfter("3", now: now) == .seconds(3))
        #expect(AppStoreAPIClient.retryAfter(" 0 ", now: now) == .zero)
        let date = AppStoreAPIClient.retryAfter("Thu, 28 May 2026 20:26:50 GMT", now: now)
        #expect(date == .milliseconds(9_750), "1780000010 is Thu, 28 May 2026 20:26:50 GMT")
        for garbage in ["", "soon", "-5", "1.5", "Thu, 28 May 2026"] {
            #expect(AppStoreAPIClient.retryAfter(garbage, now: now) == nil, "\(garbage)")
        }
        // RFC 9110's three HTTP-date forms, as a proxy may send them (and as the answer's own Date header comes).
        let rfc = Date(timeIntervalSince1970: 784_111_777)
        for form in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(AppStoreAPIClient.httpDate(form) == rfc, "\(form)")
        }
        // Apple's Date corrects a host clock behind it; it is left alone when the clocks agree (it has whole seconds) and
        // when it is behind (a cached, stale Date would make every wait read too long).
        let local = Date(timeIntervalSince1970: 784_111_777.6)
        #expect(AppStoreAPIClient.referenceNow(dateHeader: "Sun, 06 Nov 1994 08:49:37 GMT", local: local) == local)
        #expect(AppStoreAPIClient.referenceNow(dateHeader: "Sun, 06 Nov 1994 08:50:37 GMT", local: local) == rfc.addingTimeInterval(60))
        #expect(AppStoreAPIClient.referenceNow(dateHeader: "Sun, 06 Nov 1994 08:48:37 GMT", local: local) == local)
        #expect(AppStoreAPIClient.referenceNow(dateHeader: "garbage", local: local) == local)
        #expect(AppStoreAPIClient.referenceNow(dateHeader: nil, local: local) == local)
    }

    /// A `Retry-After` already past on this host's clock (the clocks disagree) still gets the jittered backoff: retries
    /// neither go out at once nor in step.
    @Test func aRetryAfterAlreadyPastStillWaitsTheJitteredBackoff() async throws {
        var configuration = AppStoreAPIConfiguration(issuerID: "i", keyID: "k", privateKeyPEM: P256Key.freshPEM(), bundleID: "b")
        configuration.initialBackoff = .milliseconds(100)
        let client = try await AppStoreAPIClient(configuration: configuration)
        let waits = (0..<200).map { _ in client.backoff(afterAttempt: 2, retryAfter: .zero) }
        #expect(waits.allSatisfy { $0 <= .milliseconds(200) })
        #expect(Set(waits).count > 10, "jittered, not zero every time")
        #expect(client.backoff(afterAttempt: 1, retryAfter: .seconds(3)) >= .seconds(3), "never earlier than Apple asked")
    }

    /// A `Retry-After` an hour away is not spent asking Apple early (each ask counts against the hourly limit), nor
    /// read as 1.8 billion seconds and cut to the longest backoff: the caller gets the rate limit at once, and so do
    /// later calls to that endpoint in that environment (through copies of the client too) without asking Apple,
    /// while other endpoints and the other environment are still asked.
    @Test func aRetryAfterLongerThanTheLongestBackoffIsNotWaitedFor() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("3200", environment: "Production"), id: "3200", environment: .production)
            await fake.state.inject(Array(repeating: .rateLimited(retryAfterSeconds: 3_600), count: 10))
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 4))
            await #expect {
                _ = try await client.transactionInfo(transactionID: "3200", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .rateLimited }
            #expect(await fake.state.requests.count == 1)
            let copy = client
            await #expect {
                _ = try await copy.transactionInfo(transactionID: "3200", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .rateLimited && "\($0)".contains("Get Transaction Info") }
            #expect(await fake.state.requests.count == 1, "not asked again before the time Apple gave")
            _ = try? await client.allSubscriptionStatuses(transactionID: "3200", environment: .production, logger: logger)
            _ = try? await client.transactionInfo(transactionID: "3200", environment: .sandbox, logger: logger)
            #expect(await fake.state.requests.count == 3, "another endpoint, another environment: asked")
        }
    }

    /// A call to an endpoint Apple asked to leave alone for a moment (a Retry-After within the longest backoff) waits for
    /// that time before asking, even when it is another call than the one that was refused.
    @Test func aCallBeforeAShortRetryAfterWaitsForIt() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("3250", environment: "Production"), id: "3250", environment: .production)
            await fake.state.inject([.rateLimited(retryAfterSeconds: 1)])
            var configuration = fake.configuration(maximumAttempts: 1)
            configuration.maximumBackoff = .seconds(5)
            let client = try await AppStoreAPIClient(configuration: configuration)
            await #expect {
                _ = try await client.transactionInfo(transactionID: "3250", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .rateLimited }
            let asked = ContinuousClock.now
            _ = try await client.transactionInfo(transactionID: "3250", environment: .production, logger: logger)
            #expect(asked.duration(to: .now) >= .milliseconds(500), "asked Apple before the time it gave")
            #expect(await fake.state.requests.count == 2)
        }
    }

    /// 4040002, 4040004 and 4040006 are Apple's "not found, try again" (its own libraries retry them): retried, not taken
    /// as "no such purchase".
    @Test(arguments: [4_040_002, 4_040_004, 4_040_006])
    func applesNotFoundYetIsRetried(_ appleErrorCode: Int) async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let jws = try signed("3300", environment: "Production")
            await fake.state.addTransaction(jws, id: "3300", environment: .production)
            await fake.state.inject([.notFoundYet(appleErrorCode)])
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 3))
            #expect(try await client.transactionInfo(transactionID: "3300", environment: .production, logger: logger) == jws)
            #expect(await fake.state.requests.count == 2)
            await fake.state.inject(Array(repeating: .notFoundYet(appleErrorCode), count: 3))
            await #expect {
                _ = try await client.transactionInfoAnyEnvironment(transactionID: "3300", logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .notFoundYet && ($0 as? AppStoreAPIError)?.appleErrorCode == appleErrorCode }
            #expect(await fake.state.requests.map(\.environment).filter { $0 == .sandbox }.isEmpty, "not a reason to ask the sandbox")
        }
    }

    /// Apple answers every 404 with its error body; a 404 without one (a wrong APPSTORE_API_URL, a proxy) is not Apple
    /// saying the purchase does not exist.
    @Test func a404WithoutApplesErrorBodyIsNotAnAnswer() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.inject([FakeAppStoreState.Fault(status: 404, appleErrorCode: nil)])
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 3))
            await #expect {
                _ = try await client.transactionInfo(transactionID: "3400", environment: .production, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .malformedResponse && ($0 as? AppStoreAPIError)?.httpStatus == 404 }
        }
    }

    @Test func theFakeRefusesTokensAppleWouldRefuse() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.addTransaction(try signed("4000"), id: "4000", environment: .sandbox)
            var wrongBundle = fake.configuration(maximumAttempts: 1)
            wrongBundle.bundleID = "com.other.app"
            var wrongIssuer = fake.configuration(maximumAttempts: 1)
            wrongIssuer.issuerID = UUID().uuidString
            var wrongKey = fake.configuration(maximumAttempts: 1)
            wrongKey.privateKeyPEM = P256Key.freshPEM()
            for configuration in [wrongBundle, wrongIssuer, wrongKey] {
                let client = try await AppStoreAPIClient(configuration: configuration)
                await #expect {
                    _ = try await client.transactionInfo(transactionID: "4000", environment: .sandbox, logger: logger)
                } throws: { ($0 as? AppStoreAPIError)?.code == .unauthorized }
            }
            #expect(await fake.state.requests.map(\.authorized) == [false, false, false])
        }
    }

    @Test func transactionHistoryFollowsRevisionsAcrossPages() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let all = try (0..<45).map { try signed("50\($0)") }
            await fake.state.setHistory(all, for: "500", environment: .sandbox)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            let first = try await client.transactionHistoryPage(transactionID: "500", revision: nil, environment: .sandbox, logger: logger)
            #expect(first.signedTransactions.count == 20 && first.hasMore)
            #expect(try await client.transactionHistory(transactionID: "500", environment: .sandbox, logger: logger) == all)
            #expect(await fake.state.requests.count == 1 + 3)
        }
    }

    @Test func notificationHistoryFollowsPaginationTokens() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let items = (0..<41).map {
                NotificationHistoryItem(signedPayload: "payload-\($0)", sendAttempts: [.init(attemptDate: 1, sendAttemptResult: "NO_RESPONSE")])
            }
            await fake.state.setNotificationHistory(items, environment: .production)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let request = NotificationHistoryRequest(startDate: now - 3_600_000, endDate: now, onlyFailures: true)
            #expect(try await client.notificationHistory(request, environment: .production, logger: logger) == items)
            #expect(await fake.state.requests.count == 3)
        }
    }

    /// A page that says more follow but gives no token ends the walk with an error, not quietly: the reconciliation that
    /// asked would otherwise count the window as asked with its later pages unread. A page without its optional fields
    /// (a quiet window, as Apple's own libraries allow) is an empty last page.
    @Test func notificationHistoryRefusesMoreWithoutAToken() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            await fake.state.setOmitsPaginationToken(true)
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1))
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let request = NotificationHistoryRequest(startDate: now - 3_600_000, endDate: now, onlyFailures: nil)
            await #expect {
                _ = try await client.notificationHistory(request, environment: .sandbox, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .malformedResponse && "\($0)".contains("hasMore") }
        }
        let quiet = try JSONDecoder().decode(NotificationHistoryPage.self, from: Data("{}".utf8))
        #expect(quiet == NotificationHistoryPage(paginationToken: nil, hasMore: false, notificationHistory: []))
    }

    @Test func subscriptionStatusesAndTestNotifications() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let statuses = SubscriptionStatusesResponse(
                environment: "Sandbox", bundleId: fake.bundleID, appAppleId: nil,
                data: [
                    .init(
                        subscriptionGroupIdentifier: "g",
                        lastTransactions: [.init(status: 1, originalTransactionId: "600", signedTransactionInfo: "t", signedRenewalInfo: "r")])
                ]
            )
            await fake.state.setStatuses(statuses, for: "600", environment: .sandbox)
            let client = try await AppStoreAPIClient(configuration: fake.configuration())
            #expect(try await client.allSubscriptionStatuses(transactionID: "600", environment: .sandbox, logger: logger) == statuses)
            let token = try await client.requestTestNotification(environment: .sandbox, logger: logger)
            #expect(UUID(uuidString: token) != nil)
            #expect(await fake.state.testNotificationsRequested == 1)
        }
    }

    @Test func configurationFromTheEnvironmentNamesWhatIsMissing() throws {
        #expect(try AppStoreAPIConfiguration.fromSettings([:]) == nil)
        #expect {
            _ = try AppStoreAPIConfiguration.fromSettings(["APPSTORE_ISSUER_ID": "i", "APP_BUNDLE_ID": "b"])
        } throws: { "\($0)".contains("APPSTORE_KEY_ID") && "\($0)".contains("APPSTORE_PRIVATE_KEY") }
        let configuration = try #require(
            try AppStoreAPIConfiguration.fromSettings([
                "APPSTORE_ISSUER_ID": "i", "APPSTORE_KEY_ID": "k",
                "APPSTORE_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----",
                "APP_BUNDLE_ID": "com.a, com.b", "APPSTORE_API_SANDBOX_URL": "http://localhost:1/",
            ]))
        #expect(configuration.bundleID == "com.a")
        #expect(configuration.privateKeyPEM.contains("\nabc\n"))
        #expect(configuration.baseURL(.sandbox) == "http://localhost:1")
        #expect(configuration.baseURL(.production) == "https://api.storekit.apple.com")
    }

    @Test func aKeyThatIsNotAP256PKCS8PEMIsAConfigurationError() async throws {
        let configuration = AppStoreAPIConfiguration(issuerID: "i", keyID: "k", privateKeyPEM: "nope", bundleID: "b")
        await #expect {
            _ = try await AppStoreAPIClient(configuration: configuration)
        } throws: { ($0 as? AppStoreAPIError)?.code == .configuration }
    }
}

extension AppStoreAPIClientTests {
    /// Captures log lines (message and metadata) for assertions.
    final class CapturedLogs: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }

        struct Handler: LogHandler {
            let sink: CapturedLogs
            var logLevel: Logger.Level = .trace
            var metadata: Logger.Metadata = [:]
            subscript(metadataKey key: String) -> Logger.Metadata.Value? {
                get { metadata[key] }
                set { metadata[key] = newValue }
            }
            func log(event: LogEvent) { sink.append("\(event.message) \(metadata.merging(event.metadata ?? [:]) { $1 })") }
        }
    }

    @Test func aClientErrorIsNotRetriedAndNoTokenReachesTheLogs() async throws {
        try await FakeAppStoreServer.withRunning { fake in
            let logs = CapturedLogs()
            let logger = Logger(label: "capture") { _ in CapturedLogs.Handler(sink: logs) }
            await fake.state.inject([FakeAppStoreState.Fault(status: 400, appleErrorCode: 4_000_006)])
            let client = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 4))
            await #expect {
                _ = try await client.transactionInfo(transactionID: "x", environment: .sandbox, logger: logger)
            } throws: { ($0 as? AppStoreAPIError)?.code == .invalidTransactionID }
            #expect(await fake.state.requests.count == 1)
            // Retried calls log too; none of it may carry the bearer token.
            await fake.state.inject([.rateLimited(retryAfterSeconds: 0)])
            await fake.state.addTransaction(try signed("5000"), id: "5000", environment: .sandbox)
            _ = try await client.transactionInfo(transactionID: "5000", environment: .sandbox, logger: logger)
            #expect(await fake.state.receivedTokens.count == 3)
            #expect(logs.all.count >= 3)
            // A JWT starts with the base64url of `{"`: no log line carries one, nor the word Bearer.
            #expect(logs.all.allSatisfy { !$0.contains("eyJ") && !$0.contains("Bearer") })
        }
    }
}
