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

@Suite("App API: routes that ask Apple (validate, sync, legacy receipts) against the fake App Store Server API")
struct AppStoreRoutesTests {
    static let pki = try! TestPKI()

    /// Runs `body` with a fake App Store Server API and the app API wired to it (the client's longest backoff and the
    /// requests' budget as given, else the fake's and the service's defaults).
    func withAPI(
        configured: Bool = true, maximumAttempts: Int = 3, maximumBackoff: Duration? = nil,
        appStoreBudget: Duration = AppAPIHarness.testAppStoreBudget,
        _ body: @Sendable (AppAPIHarness, FakeAppStoreServer, any TestClientProtocol) async throws -> Void
    ) async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                var configuration = fake.configuration(maximumAttempts: maximumAttempts)
                if let maximumBackoff { configuration.maximumBackoff = maximumBackoff }
                let client = configured ? try await AppStoreAPIClient(configuration: configuration) : nil
                let harness = try await AppAPIHarness(db, pki: Self.pki, appStore: client, appStoreBudget: appStoreBudget)
                try await harness.app.test(.router) { http in try await body(harness, fake, http) }
            }
        }
    }

    /// A signed transaction as Apple's API would return it.
    static func appleTransaction(
        _ id: String, environment: String = "Sandbox", product: String = "com.example.storeledger.monthly", expiresIn: TimeInterval = 30 * 86_400,
        revoked: Bool = false, signer: TestSigner? = nil
    ) throws -> String {
        var signer = signer ?? TestSigner(pki: pki)
        signer.environment = environment
        var overrides: [String: Any] = [:]
        if revoked {
            overrides["revocationDate"] = TestSigner.milliseconds(Date())
            overrides["revocationReason"] = 0
        }
        return try signer.signedTransaction(
            signer.transactionPayload(
                transactionID: id, productID: product, purchaseDate: Date().addingTimeInterval(expiresIn - 30 * 86_400),
                expiresDate: Date().addingTimeInterval(expiresIn), signedDate: Date(), overrides: overrides
            ))
    }

    /// Get All Subscription Statuses as the fake's sandbox answers it: one subscription group holding `lastTransactions`.
    static func sandboxStatuses(
        _ fake: FakeAppStoreServer, _ lastTransactions: [SubscriptionStatusesResponse.LastTransaction]
    ) -> SubscriptionStatusesResponse {
        SubscriptionStatusesResponse(
            environment: "Sandbox", bundleId: fake.bundleID, appAppleId: nil,
            data: [.init(subscriptionGroupIdentifier: "g", lastTransactions: lastTransactions)])
    }

    static func validateBody(_ id: Any, product: String = "com.example.storeledger.monthly") throws -> ByteBuffer {
        try AppAPIHarness.body(["transactionId": id, "productId": product, "revoked": false])
    }

    @Test func validateAsksProductionThenSandboxRecordsApplesAnswerAndUnlocks() async throws {
        try await withAPI { harness, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8000"), id: "8000", environment: .sandbox)
            let headers = try await AppAPIHarness.headers(user: "pat")
            var answers: [String] = []
            for _ in 0..<2 {
                let response = try await http.execute(uri: "/api/iap/validate", method: .post, headers: headers, body: try Self.validateBody("8000"))
                #expect(response.status == .ok)
                let json = try AppAPIHarness.json(response)
                #expect(json["isUnlocked"] as? Bool == true)
                #expect(json["environment"] as? String == "Sandbox")
                #expect(json["transactionId"] as? String == "8000")
                #expect(json["originalTransactionId"] as? String == "8000")
                #expect(json["revoked"] as? Bool == false)
                answers.append(String(buffer: response.body))
            }
            #expect(answers[0] == answers[1])
            #expect(await fake.state.transactionInfoRequests.map(\.environment) == [.production, .sandbox, .production, .sandbox])
            #expect(
                try await harness.count(
                    "SELECT count(*)::int8 FROM events WHERE source = 'server_api' AND user_id = 'pat' AND environment_hint = 'sandbox'") == 2)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'pat'") == 1)
        }
    }

    @Test func theSandboxRouteAsksTheSandboxOnly() async throws {
        try await withAPI { _, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8100"), id: "8100", environment: .sandbox)
            let response = try await http.execute(
                uri: "/api/iap/validate/sand", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8100"))
            #expect(try AppAPIHarness.json(response)["isUnlocked"] as? Bool == true)
            #expect(await fake.state.transactionInfoRequests.map(\.environment) == [.sandbox])
        }
    }

    @Test func validateSaysWhatIsMissingAndNotFoundIsNotUnlockedRatherThanAnError() async throws {
        try await withAPI { _, _, http in
            let headers = try await AppAPIHarness.headers(user: "pat")
            for body in [#"{"productId":"p"}"#, #"{"transactionId":"1"}"#, #"{"transactionId":"","productId":"p"}"#, "nope"] {
                let response = try await http.execute(uri: "/api/iap/validate", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(response.status == .badRequest)
                #expect(try AppAPIHarness.json(response)["error"] as? String == "transactionId and productId required")
            }
            let missing = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: headers, body: try Self.validateBody("999", product: "p"))
            #expect(missing.status == .ok)
            let json = try AppAPIHarness.json(missing)
            #expect(json["isUnlocked"] as? Bool == false)
            #expect(json["productId"] as? String == "p")
            #expect(json["environment"] == nil && json["originalTransactionId"] == nil, "left out, never null (seed 002's strict clients)")
        }
    }

    @Test func upstreamRateLimitingIsRetriedAndWhenItPersistsIsA503() async throws {
        try await withAPI(maximumAttempts: 3) { _, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8200", environment: "Production"), id: "8200", environment: .production)
            let headers = try await AppAPIHarness.headers(user: "pat")
            await fake.state.inject([.rateLimited(), .rateLimited()])
            let recovered = try await http.execute(uri: "/api/iap/validate", method: .post, headers: headers, body: try Self.validateBody(8200))
            #expect(recovered.status == .ok)
            #expect(try AppAPIHarness.json(recovered)["environment"] as? String == "Production")
            await fake.state.inject(Array(repeating: .rateLimited(), count: 3))
            let limited = try await http.execute(uri: "/api/iap/validate", method: .post, headers: headers, body: try Self.validateBody("8200"))
            #expect(limited.status == .serviceUnavailable)
            #expect(try AppAPIHarness.json(limited)["code"] as? String == "upstream_rate_limited")
        }
    }

    /// Apple's "not found, try again" (4040002/4040004/4040006) that persists is Apple not answering, not "no such
    /// purchase": seed 002's app gets a 503 it can retry, never `isUnlocked: false` for a purchase Apple has.
    @Test func applesNotFoundYetIsRetriedAndWhenItPersistsIsA503NotALockedAnswer() async throws {
        try await withAPI(maximumAttempts: 2) { _, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8220", environment: "Production"), id: "8220", environment: .production)
            await fake.state.inject([.notFoundYet(4_040_002)])
            let recovered = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8220"))
            #expect(recovered.status == .ok)
            #expect(try AppAPIHarness.json(recovered)["environment"] as? String == "Production")
            await fake.state.inject(Array(repeating: .notFoundYet(4_040_004), count: 2))
            let persisting = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8220"))
            #expect(persisting.status == .serviceUnavailable)
            #expect(try AppAPIHarness.json(persisting)["code"] as? String == "upstream_unavailable")
        }
    }

    /// An app's request waits for the lookups it causes, and its client gives up after a minute or less: the calls to
    /// Apple stop retrying when the request's budget runs out, and the answer is a 503 within it.
    @Test func anUpstreamThatKeepsFailingIsGivenUpOnWithinTheRequestsBudget() async throws {
        try await withAPI(maximumAttempts: 10, maximumBackoff: .seconds(1), appStoreBudget: .milliseconds(1_500)) { _, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8250"), id: "8250", environment: .sandbox)
            // Each answer asks for a second's wait: ten attempts would take nine seconds.
            await fake.state.inject(Array(repeating: .rateLimited(retryAfterSeconds: 1), count: 10))
            let started = ContinuousClock.now
            let response = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8250"))
            #expect(response.status == .serviceUnavailable)
            // Within the budget (and far from the nine seconds ten attempts take), with room for a loaded machine.
            #expect(started.duration(to: .now) < .seconds(5))
            // The first attempt and at most one retry a second later (none when the first answer came late; not even
            // the first when a loaded machine spent the budget before it): the next would start past the budget.
            #expect(await fake.state.requests.count <= 2)
        }
    }

    @Test(arguments: ["forged", "wrong app"])
    func aForgedOrForeignAnswerFromUpstreamIsRejectedAndNeverProjected(_ kind: String) async throws {
        try await withAPI { harness, fake, http in
            let signer = kind == "forged" ? TestSigner(pki: try TestPKI()) : TestSigner(pki: Self.pki, bundleID: "com.other.app")
            await fake.state.addTransaction(try Self.appleTransaction("8300", signer: signer), id: "8300", environment: .sandbox)
            let response = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8300")
            )
            #expect(response.status == .unprocessableContent)
            #expect(try AppAPIHarness.json(response)["code"] as? String == "invalid_signed_transaction")
            #expect(try await harness.count("SELECT count(*)::int8 FROM subscriptions") == 0)
            #expect(try await harness.count("SELECT count(*)::int8 FROM event_queue WHERE state = 'rejected'") == 1)
        }
    }

    @Test func revokedAndExpiredPurchasesAreNotUnlocked() async throws {
        try await withAPI { _, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8400", revoked: true), id: "8400", environment: .sandbox)
            await fake.state.addTransaction(try Self.appleTransaction("8401", expiresIn: -60), id: "8401", environment: .sandbox)
            let revoked = try AppAPIHarness.json(
                try await http.execute(
                    uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8400")
                ))
            #expect(revoked["isUnlocked"] as? Bool == false)
            #expect(revoked["revoked"] as? Bool == true)
            let expired = try AppAPIHarness.json(
                try await http.execute(
                    uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("8401")
                ))
            #expect(expired["isUnlocked"] as? Bool == false)
            #expect(expired["revoked"] as? Bool == false)
        }
    }

    @Test func validateNeedsCredentialsAndAConfiguredClient() async throws {
        try await withAPI(configured: false) { _, _, http in
            #expect(try await http.execute(uri: "/api/iap/validate", method: .post, body: try Self.validateBody("1")).status == .unauthorized)
            let response = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: AppAPIHarness.serviceHeaders, body: try Self.validateBody("1"))
            #expect(response.status == .serviceUnavailable)
            #expect(try AppAPIHarness.json(response)["code"] as? String == "app_store_api_not_configured")
        }
    }

    /// Get Transaction Info answers with the period asked for, which may be long past (renewals whose notifications
    /// never arrived, a client sending its original transaction id); Get All Subscription Statuses gives Apple's latest
    /// transaction and renewal info of that subscription, and sync and validate record them too.
    @Test func aLookupOfAPastPeriodRecordsTheSubscriptionsLatestStateToo() async throws {
        try await withAPI { harness, fake, http in
            let signer = TestSigner(pki: Self.pki)
            let day: TimeInterval = 86_400
            let first = try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: "8600", originalTransactionID: "8600", purchaseDate: Date().addingTimeInterval(-60 * day),
                    expiresDate: Date().addingTimeInterval(-30 * day), signedDate: Date()))
            let latest = try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: "8601", originalTransactionID: "8600", purchaseDate: Date().addingTimeInterval(-30 * day),
                    expiresDate: Date().addingTimeInterval(day), signedDate: Date()))
            let renewal = try signer.signedRenewalInfo(
                signer.renewalInfoPayload(originalTransactionID: "8600", renewalDate: Date().addingTimeInterval(day), signedDate: Date()))
            await fake.state.addTransaction(first, id: "8600", environment: .sandbox)
            await fake.state.setStatuses(
                Self.sandboxStatuses(
                    fake,
                    [
                        .init(status: 1, originalTransactionId: "8600", signedTransactionInfo: latest, signedRenewalInfo: renewal),
                        // Another subscription of the same customer: not the one asked about, not recorded.
                        .init(
                            status: 1, originalTransactionId: "8700", signedTransactionInfo: try Self.appleTransaction("8700"),
                            signedRenewalInfo: nil),
                    ]),
                for: "8600", environment: .sandbox)
            let headers = try await AppAPIHarness.headers(user: "robin")
            let sync = try await http.execute(
                uri: "/api/subscription/sync", method: .post, headers: headers, body: try AppAPIHarness.body(["transactionId": "8600"]))
            #expect(sync.status == .ok)
            #expect(try AppAPIHarness.json(sync)["is_premium"] as? Bool == true)
            let validate = try await http.execute(uri: "/api/iap/validate", method: .post, headers: headers, body: try Self.validateBody("8600"))
            #expect(try AppAPIHarness.json(validate)["isUnlocked"] as? Bool == true)
            #expect(
                try await harness.count(
                    "SELECT count(*)::int8 FROM subscriptions WHERE original_transaction_id = '8600' AND auto_renew AND expires_at > now()") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions WHERE original_transaction_id = '8700'") == 0)
            #expect(await fake.state.requests.contains { $0.path == "/inApps/v1/subscriptions/8600" })
        }
    }

    /// A rebuild's swap that begins between the period asked for and the subscription's latest state turns validate away
    /// (503 `rebuild_in_progress`, retry), instead of answering from the period asked for alone: long lapsed here, it
    /// said `isUnlocked: false` to a customer whose subscription runs.
    @Test func aSwapBetweenALookupAndTheLatestStateTurnsTheCallerAway() async throws {
        try await withAPI { harness, fake, http in
            let signer = TestSigner(pki: Self.pki)
            let day: TimeInterval = 86_400
            let first = try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: "8800", originalTransactionID: "8800", purchaseDate: Date().addingTimeInterval(-60 * day),
                    expiresDate: Date().addingTimeInterval(-30 * day), signedDate: Date()))
            let latest = try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: "8801", originalTransactionID: "8800", purchaseDate: Date().addingTimeInterval(-30 * day),
                    expiresDate: Date().addingTimeInterval(day), signedDate: Date()))
            await fake.state.addTransaction(first, id: "8800", environment: .sandbox)
            await fake.state.setStatuses(
                Self.sandboxStatuses(
                    fake, [.init(status: 1, originalTransactionId: "8800", signedTransactionInfo: latest, signedRenewalInfo: nil)]),
                for: "8800", environment: .sandbox)
            // The swap takes the read model's locks when the server asks Apple for the latest state, and holds them.
            let (takeSwapAsked, takeSwap) = AsyncStream<Void>.makeStream()
            let (swapTakenSaid, swapTaken) = AsyncStream<Void>.makeStream()
            let (swapOverSaid, endSwap) = AsyncStream<Void>.makeStream()
            defer { endSwap.finish() }
            let swap = Task {
                try await harness.db.client.inTransaction(logger: harness.db.logger) { connection in
                    for await _ in takeSwapAsked { break }
                    try await ShadowSchema.lockLiveTables(on: connection, logger: harness.db.logger)
                    swapTaken.yield()
                    for await _ in swapOverSaid { break }
                }
            }
            await fake.state.setHook(for: "/inApps/v1/subscriptions/8800") {
                takeSwap.yield()
                for await _ in swapTakenSaid { break }
            }
            let validate = try await http.execute(
                uri: "/api/iap/validate", method: .post, headers: try await AppAPIHarness.headers(user: "sam"),
                body: try Self.validateBody("8800"))
            #expect(validate.status == .serviceUnavailable)
            #expect(try AppAPIHarness.json(validate)["code"] as? String == "rebuild_in_progress")
            endSwap.yield()
            try await swap.value
        }
    }

    /// When the period asked for is already the latest, Apple's status answer signs the same transaction anew: it is
    /// known by its id and not appended a second time (the renewal info is).
    @Test func aLookupOfTheLatestPeriodAppendsItOnce() async throws {
        try await withAPI { harness, fake, http in
            let signer = TestSigner(pki: Self.pki)
            func latest(signedAt: Date) throws -> String {
                try signer.signedTransaction(
                    signer.transactionPayload(
                        transactionID: "8650", originalTransactionID: "8650", purchaseDate: Date().addingTimeInterval(-86_400),
                        expiresDate: Date().addingTimeInterval(29 * 86_400), signedDate: signedAt))
            }
            await fake.state.addTransaction(try latest(signedAt: Date()), id: "8650", environment: .sandbox)
            let renewal = try signer.signedRenewalInfo(signer.renewalInfoPayload(originalTransactionID: "8650", signedDate: Date()))
            await fake.state.setStatuses(
                Self.sandboxStatuses(
                    fake,
                    [
                        .init(
                            status: 1, originalTransactionId: "8650", signedTransactionInfo: try latest(signedAt: Date().addingTimeInterval(1)),
                            signedRenewalInfo: renewal)
                    ]),
                for: "8650", environment: .sandbox)
            let sync = try await http.execute(
                uri: "/api/subscription/sync", method: .post, headers: try await AppAPIHarness.headers(user: "lee"),
                body: try AppAPIHarness.body(["transactionId": "8650"]))
            #expect(sync.status == .ok)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'server_api'") == 2)
            #expect(try await harness.count("SELECT count(*)::int8 FROM renewal_infos WHERE original_transaction_id = '8650'") == 1)
        }
    }

    @Test func syncTakesOnlyTheTransactionIdAndTheFactsFromApple() async throws {
        try await withAPI { harness, fake, http in
            await fake.state.addTransaction(try Self.appleTransaction("8500", expiresIn: 3 * 86_400), id: "8500", environment: .sandbox)
            let headers = try await AppAPIHarness.headers(user: "quinn")
            let claim: [String: Any] = [
                "transactionId": 8500, "productId": "com.example.storeledger.lifetime", "originalTransactionId": 8500,
                "purchaseDate": "2020-01-01T00:00:00Z", "expirationDate": "2099-01-01T00:00:00Z",
            ]
            let response = try await http.execute(uri: "/api/subscription/sync", method: .post, headers: headers, body: try AppAPIHarness.body(claim))
            #expect(response.status == .ok)
            #expect(try AppAPIHarness.json(response)["success"] as? Bool == true)
            #expect(
                try await harness.count(
                    "SELECT count(*)::int8 FROM subscriptions WHERE product_id = 'com.example.storeledger.monthly' AND expires_at < now() + interval '4 days'"
                ) == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE position('2099' in convert_from(body, 'UTF8')) > 0") == 0)
            let status = try AppAPIHarness.json(try await http.execute(uri: "/api/subscription/status", method: .get, headers: headers))
            #expect(status["isPremium"] as? Bool == true)
            // Byte for byte what seed 001's app posts: its SyncRequest through a default JSONEncoder (ids as numbers,
            // dates as seconds since 2001, a nil expiry left out).
            struct SyncRequest: Encodable {
                let transactionId: UInt64
                let productId: String
                let purchaseDate: Date
                let expirationDate: Date?
                let originalTransactionId: UInt64
            }
            let seedBody = try JSONEncoder().encode(
                SyncRequest(
                    transactionId: 8500, productId: "com.example.storeledger.monthly", purchaseDate: Date(), expirationDate: nil,
                    originalTransactionId: 8500))
            let seedSync = try await http.execute(
                uri: "/api/subscription/sync", method: .post, headers: headers, body: ByteBuffer(bytes: seedBody))
            #expect(seedSync.status == .ok)
            #expect(try AppAPIHarness.json(seedSync)["is_premium"] as? Bool == true)
            let unknown = try await http.execute(
                uri: "/api/subscription/sync", method: .post, headers: headers, body: try AppAPIHarness.body(["transactionId": "777"]))
            #expect(unknown.status == .notFound)
            #expect(try AppAPIHarness.json(unknown)["code"] as? String == "transaction_not_found")
        }
    }

    @Test(arguments: [
        ("xcode/xcode-app-receipt-with-transaction", "0"),  // Xcode's app receipt (PKCS#7), naming transaction "0"
        ("mock_signed_data/legacyTransaction", "33993399"),  // Apple's StoreKit 1 transaction receipt vector
    ])
    func aLegacyReceiptIsResolvedThroughApplesAPI(_ fixture: String, _ transactionID: String) async throws {
        try await withAPI { harness, fake, http in
            // The fake's sandbox knows the transaction the receipt names.
            await fake.state.addTransaction(try Self.appleTransaction(transactionID), id: transactionID, environment: .sandbox)
            let headers = try await AppAPIHarness.headers(user: "rae")
            let response = try await http.execute(
                uri: "/api/v1/payments/appstore/verify", method: .post, headers: headers,
                body: try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt(at: fixture)])
            )
            #expect(response.status == .ok)
            let json = try AppAPIHarness.json(response)
            #expect(json["is_premium"] as? Bool == true)
            #expect((json["subscription"] as? [String: Any])?["environment"] as? String == "Sandbox")
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'rae'") == 1)
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions WHERE transaction_id = \(transactionID)") == 1)
        }
    }

    /// A receipt whose newest purchase is a consumable still holds the subscription: the newest of each product is looked
    /// up, the subscription answered, and is_premium counts it.
    @Test func aReceiptIsVerifiedForEveryProductItHoldsItsSubscriptionAnswered() async throws {
        try await withAPI { harness, fake, http in
            let signer = TestSigner(pki: Self.pki)
            let coins = try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: "8901", originalTransactionID: "8901", productID: "com.example.storeledger.coins", purchaseDate: Date(),
                    signedDate: Date(), overrides: ["type": "Consumable"]))
            await fake.state.addTransaction(coins, id: "8901", environment: .sandbox)
            await fake.state.addTransaction(try Self.appleTransaction("8801"), id: "8801", environment: .sandbox)
            let receipt = AppReceiptDER.base64(purchases: [
                .init(
                    productID: "com.example.storeledger.monthly", transactionID: "8801", originalTransactionID: "8801",
                    purchaseDate: "2026-01-01T00:00:00Z", expiresDate: "2026-02-01T00:00:00Z"),
                .init(
                    productID: "com.example.storeledger.coins", transactionID: "8901", originalTransactionID: "8901",
                    purchaseDate: "2026-01-20T00:00:00Z"),
            ])
            let response = try await http.execute(
                uri: "/api/v1/payments/appstore/verify", method: .post, headers: try await AppAPIHarness.headers(user: "sky"),
                body: try AppAPIHarness.body(["receipt_data": receipt]))
            #expect(response.status == .ok)
            let json = try AppAPIHarness.json(response)
            #expect(json["is_premium"] as? Bool == true)
            #expect((json["subscription"] as? [String: Any])?["product_id"] as? String == "com.example.storeledger.monthly")
            #expect(try await harness.count("SELECT count(*)::int8 FROM transactions WHERE transaction_id IN ('8801', '8901')") == 2)
        }
    }

    @Test func aReceiptNamingNoTransactionOrNoReceiptAtAllIsA422() async throws {
        try await withAPI { _, _, http in
            let headers = try await AppAPIHarness.headers(user: "rae")
            let empty = try await http.execute(
                uri: "/api/v1/payments/appstore/verify", method: .post, headers: headers,
                body: try AppAPIHarness.body(["receipt_data": try AppReceiptFixtures.receipt("xcode-app-receipt-empty")])
            )
            #expect(empty.status == .unprocessableContent)
            #expect(try AppAPIHarness.json(empty)["code"] as? String == "receipt_has_no_transactions")
            let garbage = try await http.execute(
                uri: "/api/v1/payments/appstore/verify", method: .post, headers: headers, body: try AppAPIHarness.body(["receipt_data": "aGVsbG8="])
            )
            #expect(garbage.status == .unprocessableContent)
            #expect(try AppAPIHarness.json(garbage)["code"] as? String == "invalid_receipt")
        }
    }
}

/// The receipts copied from Apple's samples and test vectors (Fixtures/apple).
enum AppReceiptFixtures {
    /// One of Xcode's app receipts (`xcode/`).
    static func receipt(_ name: String) throws -> String {
        try receipt(at: "xcode/\(name)")
    }

    /// The receipt at `path` under Fixtures/apple.
    static func receipt(at path: String) throws -> String {
        try String(contentsOf: Bundle.module.resourceURL!.appendingPathComponent("Fixtures/apple/\(path)"), encoding: .utf8)
    }
}
