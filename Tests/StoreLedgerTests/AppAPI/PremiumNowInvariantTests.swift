import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import PostgresNIO
import StoreLedgerAppStoreAPI
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// One definition of "premium now" (`entitlements_at`, migration 0012): for the same user at the same instant, every
/// route that answers it — seed 000 transaction / restore / status, seed 001 status / sync, seed 002 validate, the
/// entitlements API — the webhook outbox and SQL (`entitlements_now`) give the same answer, for each kind of purchase
/// a user can hold. Each user holds exactly one purchase, posted by their app; Apple's API (the fake) returns the
/// same signed transaction to sync and validate.
@Suite("App API: every route and SQL agree on premium now")
struct PremiumNowInvariantTests {
    static let pki = try! TestPKI()
    static let day: TimeInterval = 86_400

    /// A user's one purchase and the answer every route must give.
    struct Scenario: Sendable {
        var name: String
        var transactionID: String
        /// The signed transaction the app posts (and Apple's API returns).
        var jws: String
        var environment: AppStoreAPIHost = .sandbox
        /// Facts Apple sends after the purchase (notifications), applied through the worker's path.
        var notifications: [String] = []
        var premium: Bool
    }

    /// Signed data shaped like Apple's: Sandbox transactions, and Sandbox notifications without appAppleId.
    struct Apple {
        var signer: TestSigner

        func subscription(
            _ id: String, purchased: Date, expires: Date, product: String = "com.example.storeledger.monthly",
            overrides: [String: Any] = [:]
        ) throws -> String {
            try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: id, productID: product, purchaseDate: purchased, expiresDate: expires, signedDate: purchased, overrides: overrides
                ))
        }

        func oneTime(_ id: String, type: String, product: String, environment: String = "Sandbox") throws -> String {
            var signer = signer
            signer.environment = environment
            let purchased = Date().addingTimeInterval(-3600)
            return try signer.signedTransaction(
                signer.transactionPayload(
                    transactionID: id, productID: product, purchaseDate: purchased, signedDate: purchased, type: type
                ))
        }

        /// DID_FAIL_TO_RENEW / GRACE_PERIOD for subscription `id` whose period ended at `expires`, grace until `graceEnd`.
        func graceStarted(_ id: String, purchased: Date, expires: Date, graceEnd: Date) throws -> String {
            let failed = expires.addingTimeInterval(3600)
            var payload = signer.notificationPayload(
                type: "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signedDate: failed,
                signedTransactionInfo: try subscription(id, purchased: purchased, expires: expires),
                signedRenewalInfo: try signer.signedRenewalInfo(
                    signer.renewalInfoPayload(
                        originalTransactionID: id, renewalDate: expires, signedDate: failed,
                        overrides: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": TestSigner.milliseconds(graceEnd)]
                    )),
                status: 4
            )
            var data = payload["data"] as? [String: Any] ?? [:]
            data.removeValue(forKey: "appAppleId")
            payload["data"] = data
            return try signer.sign(json: payload)
        }
    }

    /// The scenarios without a product catalog.
    static func scenarios(_ apple: Apple) throws -> [Scenario] {
        let now = Date()
        let lapsedEnd = now.addingTimeInterval(-Self.day)
        let graceExpired = now.addingTimeInterval(-20 * Self.day)
        let stillInGrace = now.addingTimeInterval(-2 * Self.day)
        return [
            Scenario(
                name: "consumable only", transactionID: "9100",
                jws: try apple.oneTime("9100", type: "Consumable", product: "com.example.coins.100"), premium: false),
            Scenario(
                name: "non-consumable (Production)", transactionID: "9200",
                jws: try apple.oneTime("9200", type: "Non-Consumable", product: "com.example.fullunlock", environment: "Production"),
                environment: .production, premium: true),
            Scenario(
                name: "active subscription", transactionID: "9300",
                jws: try apple.subscription("9300", purchased: now.addingTimeInterval(-Self.day), expires: now.addingTimeInterval(29 * Self.day)),
                premium: true),
            Scenario(
                name: "lapsed subscription, no EXPIRED", transactionID: "9400",
                jws: try apple.subscription("9400", purchased: lapsedEnd.addingTimeInterval(-30 * Self.day), expires: lapsedEnd),
                premium: false),
            Scenario(
                name: "grace period ended, no GRACE_PERIOD_EXPIRED", transactionID: "9500",
                jws: try apple.subscription("9500", purchased: graceExpired.addingTimeInterval(-30 * Self.day), expires: graceExpired),
                notifications: [
                    try apple.graceStarted(
                        "9500", purchased: graceExpired.addingTimeInterval(-30 * Self.day), expires: graceExpired,
                        graceEnd: graceExpired.addingTimeInterval(16 * Self.day))
                ],
                premium: false),
            Scenario(
                name: "in a grace period", transactionID: "9550",
                jws: try apple.subscription("9550", purchased: stillInGrace.addingTimeInterval(-30 * Self.day), expires: stillInGrace),
                notifications: [
                    try apple.graceStarted(
                        "9550", purchased: stillInGrace.addingTimeInterval(-30 * Self.day), expires: stillInGrace,
                        graceEnd: stillInGrace.addingTimeInterval(16 * Self.day))
                ],
                premium: true),
            Scenario(
                name: "refunded subscription", transactionID: "9600",
                jws: try apple.subscription(
                    "9600", purchased: now.addingTimeInterval(-5 * Self.day), expires: now.addingTimeInterval(25 * Self.day),
                    overrides: [
                        "revocationDate": TestSigner.milliseconds(now.addingTimeInterval(-Self.day)),
                        "revocationReason": 0, "revocationType": "REFUND_FULL",
                        "signedDate": TestSigner.milliseconds(now.addingTimeInterval(-Self.day)),
                    ]),
                premium: false),
        ]
    }

    @Test func withoutACatalogEveryRouteGivesTheSameAnswerForEachKindOfPurchase() async throws {
        try await check(catalog: .empty) { apple in try Self.scenarios(apple) }
    }

    @Test func withACatalogAProductItOmitsGrantsNothingAndAConsumableItListsGrantsForItsPeriod() async throws {
        let catalog = ProductCatalog(products: [
            .init(productID: "com.example.storeledger.yearly", period: SubscriptionPeriod(iso8601: "P1Y")),
            .init(productID: "com.example.coins.boost", entitlements: ["premium"], period: SubscriptionPeriod(iso8601: "P1W")),
        ])
        try await check(catalog: catalog) { apple in
            let now = Date()
            return [
                Scenario(
                    name: "subscription to a product missing from the catalog", transactionID: "9700",
                    jws: try apple.subscription("9700", purchased: now.addingTimeInterval(-Self.day), expires: now.addingTimeInterval(29 * Self.day)),
                    premium: false),
                Scenario(
                    name: "subscription to a listed product", transactionID: "9710",
                    jws: try apple.subscription(
                        "9710", purchased: now.addingTimeInterval(-Self.day), expires: now.addingTimeInterval(364 * Self.day),
                        product: "com.example.storeledger.yearly"),
                    premium: true),
                Scenario(
                    name: "consumable the catalog says grants premium", transactionID: "9720",
                    jws: try apple.oneTime("9720", type: "Consumable", product: "com.example.coins.boost"), premium: true),
            ]
        }
    }

    /// Plays each scenario for its own user and asks every route.
    func check(catalog: ProductCatalog, _ scenarios: @Sendable (Apple) throws -> [Scenario]) async throws {
        try await FakeAppStoreServer.withRunning { fake in
            try await TestDatabase.withFresh { db in
                let appStore = try await AppStoreAPIClient(configuration: fake.configuration(maximumAttempts: 1))
                let harness = try await AppAPIHarness(db, pki: Self.pki, catalog: catalog, appStore: appStore)
                _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/storeledger", logger: db.logger)
                let pipeline = try LedgerPipeline(db, pki: Self.pki, bundleID: TestSigner.defaultBundleID)
                let cases = try scenarios(Apple(signer: harness.signer))
                try await harness.app.test(.router) { http in
                    for (index, scenario) in cases.enumerated() {
                        await fake.state.addTransaction(scenario.jws, id: scenario.transactionID, environment: scenario.environment)
                        let answers = try await answers(
                            for: scenario, user: "user-\(index)", harness: harness, pipeline: pipeline, http: http
                        )
                        for (route, answer) in answers {
                            #expect(answer == scenario.premium, "\(scenario.name): \(route) says \(answer)")
                        }
                        #expect(answers.count == 9, "\(scenario.name): \(answers)")
                    }
                }
            }
        }
    }

    /// Every route's answer to "is this user premium now?" (by route name).
    func answers(
        for scenario: Scenario, user: String, harness: AppAPIHarness, pipeline: LedgerPipeline, http: any TestClientProtocol
    ) async throws -> [String: Bool] {
        let headers = try await AppAPIHarness.headers(user: user)
        var answers: [String: Bool] = [:]
        /// Calls a route and records the Bool at `key` of its JSON answer.
        func ask(
            _ route: String, _ uri: String, _ method: HTTPRequest.Method, headers: HTTPFields, body: [String: Any]? = nil, key: String
        ) async throws {
            let response = try await http.execute(uri: uri, method: method, headers: headers, body: try body.map(AppAPIHarness.body))
            #expect(response.status == .ok, "\(scenario.name): \(route) answered \(response.status) \(String(buffer: response.body))")
            answers[route] = try AppAPIHarness.json(response)[key] as? Bool
        }

        try await ask(
            "000 POST /transaction", "/api/v1/payments/appstore/transaction", .post, headers: headers,
            body: ["signed_transaction": scenario.jws], key: "is_premium")
        for notification in scenario.notifications {
            try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(notification)"}"#, hint: .sandbox)
        }
        try await pipeline.drain()
        // The answer before Apple's later notifications is not the one compared: ask again after them.
        if !scenario.notifications.isEmpty {
            try await ask(
                "000 POST /transaction", "/api/v1/payments/appstore/transaction", .post, headers: headers,
                body: ["signed_transaction": scenario.jws], key: "is_premium")
        }
        try await ask(
            "000 POST /restore", "/api/v1/payments/appstore/restore", .post, headers: headers,
            body: ["transactions": [scenario.jws]], key: "is_premium")
        try await ask("000 GET /status", "/api/v1/payments/appstore/status", .get, headers: headers, key: "has_subscription")
        try await ask("001 GET /status", "/api/subscription/status", .get, headers: headers, key: "isPremium")
        // Seed 001's backend answered isPremium from its stored expirationDate, and a client may still compare the two
        // (seed 000's shows its expires_date beside "Premium Active"): a premium answer never dates an expiry already
        // past (a grace period runs past the period's end). Seed 001's answer that is not premium never dates one still
        // ahead (a refund, a grace period's end, a lapse); seed 000's may, with its status saying why (a subscription
        // the catalog grants nothing for is `active` and not premium).
        for (uri, premiumKey, dateKey) in [
            ("/api/subscription/status", "isPremium", "expirationDate"), ("/api/v1/payments/appstore/status", "has_subscription", "expires_date"),
        ] {
            let answer = try AppAPIHarness.json(try await http.execute(uri: uri, method: .get, headers: headers))
            guard let premium = answer[premiumKey] as? Bool, let date = answer[dateKey] as? String else { continue }
            let parsed = premiumKey == "isPremium" ? AppAPIHarness.javaScriptDate(answer, dateKey) : AppAPIHarness.date(answer, dateKey)
            let expiration = try #require(parsed, "\(scenario.name): \(uri) \(date)")
            if premium {
                #expect(expiration > Date(), "\(scenario.name): \(uri) premium, yet \(dateKey) \(date) is past")
            } else if premiumKey == "isPremium" {
                #expect(expiration <= Date(), "\(scenario.name): \(uri) not premium, yet \(dateKey) \(date) is ahead")
            }
        }
        try await ask(
            "001 POST /sync", "/api/subscription/sync", .post, headers: headers,
            body: ["transactionId": scenario.transactionID], key: "is_premium")
        try await ask(
            "002 POST /validate", "/api/iap/validate", .post, headers: headers,
            body: ["transactionId": scenario.transactionID, "productId": "claimed.by.client", "revoked": false], key: "isUnlocked")

        let entitlements = try AppAPIHarness.json(
            try await http.execute(
                uri: "/v1/users/\(user)/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders
            ))
        answers["GET /v1/users/{id}/entitlements"] = entitlements["is_premium"] as? Bool
        let rows = entitlements["entitlements"] as? [[String: Any]] ?? []
        let rowsSayPremium = rows.contains { ($0["entitled"] as? Bool == true) && (($0["entitlements"] as? [String])?.contains("premium") ?? false) }
        #expect(rowsSayPremium == (entitlements["is_premium"] as? Bool), "\(scenario.name): \(rows)")

        answers["SQL entitlements_now"] =
            try await harness.count(
                "SELECT count(*)::int8 FROM entitlements_now WHERE user_id = \(user) AND entitlement = 'premium' AND entitled_now"
            ) > 0
        // The outbox's latest word on the purchase (its user is linked after the first projection, so by key).
        let rowsHooked = try await db(harness).query(
            """
            SELECT entitled FROM webhook_events WHERE original_transaction_id = \(scenario.transactionID)
            ORDER BY created_at DESC, occurred_at DESC LIMIT 1
            """,
            logger: harness.db.logger
        )
        for try await entitled in rowsHooked.decode(Bool.self) { answers["webhook entitled"] = entitled }
        return answers
    }

    func db(_ harness: AppAPIHarness) -> PostgresClient { harness.db.client }
}
