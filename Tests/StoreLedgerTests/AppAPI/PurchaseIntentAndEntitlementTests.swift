import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerProcessing
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("App API: purchase intents, entitlements and the product catalog")
struct PurchaseIntentAndEntitlementTests {
    static let pki = try! TestPKI()

    static let catalog = ProductCatalog(products: [
        .init(productID: "com.example.storeledger.monthly", entitlements: ["premium"], period: SubscriptionPeriod(value: 1, unit: .month)),
        .init(productID: "com.example.storeledger.yearly", entitlements: ["premium"], period: SubscriptionPeriod(value: 1, unit: .year)),
        .init(productID: "com.example.storeledger.stickers", entitlements: ["stickers"]),
    ])

    /// Creates an intent for `user` as a server does (`POST /v1/purchase-intents` with the service key).
    static func createIntent(
        _ client: any TestClientProtocol, user: String, product: String = "com.example.storeledger.monthly"
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
            body: try AppAPIHarness.body(["user_id": user, "product_id": product]))
    }

    /// A value PostgreSQL refuses as data (a NUL character, which text cannot hold) is the request's fault: 400
    /// `invalid_request`, not a 503 that tells the caller to retry the same request forever.
    @Test func aNULCharacterInAnIdentifierIsABadRequestNotAnOutage() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let intent = try await Self.createIntent(client, user: "a\u{0}b")
                #expect(intent.status == .badRequest, "\(String(buffer: intent.body))")
                #expect(try AppAPIHarness.json(intent)["code"] as? String == "invalid_request")
            }
        }
    }

    /// A user id is percent-encoded in the path by the clients that build URLs properly (`auth0|42` → `auth0%7C42`):
    /// it names the same user as its text sent raw, and text that is not valid percent-encoding is a 400, never a
    /// silent "not premium" for a user that does not exist.
    @Test func aPercentEncodedUserIDNamesTheSameUser() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let created = try await Self.createIntent(client, user: "auth0|42 a@b")
                let token = try #require(try AppAPIHarness.json(created)["correlation_id"] as? String)
                let posted = try await client.execute(
                    uri: "/api/v1/payments/appstore/transaction", method: .post, headers: try await AppAPIHarness.headers(user: "device-user"),
                    body: try AppAPIHarness.body(["signed_transaction": try harness.subscription("6100", token: token)]))
                #expect(posted.status == .ok)
                for path in ["auth0%7C42%20a%40b", "auth0|42%20a@b"] {
                    let answer = try AppAPIHarness.json(
                        try await client.execute(uri: "/v1/users/\(path)/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders))
                    #expect(answer["user_id"] as? String == "auth0|42 a@b", "\(path)")
                    #expect(answer["is_premium"] as? Bool == true, "\(path)")
                }
                let refused = try await client.execute(uri: "/v1/users/100%zz/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders)
                #expect(refused.status == .badRequest)
                #expect(try AppAPIHarness.json(refused)["code"] as? String == "invalid_request")
            }
        }
    }

    @Test func anIntentCompletesWhenAVerifiedTransactionCarriesItsTokenAndTheTokensOwnerGetsThePurchase() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let created = try await Self.createIntent(client, user: "dana")
                #expect(created.status == .created)
                let intent = try AppAPIHarness.json(created)
                let id = try #require(intent["correlation_id"] as? String)
                #expect(UUID(uuidString: id) != nil && id == id.lowercased())
                #expect(intent["status"] as? String == "pending")

                // The app buys with appAccountToken = correlation id; a different signed-in device user posts it.
                let jws = try harness.subscription("6000", token: id)
                let posted = try await client.execute(
                    uri: "/api/v1/payments/appstore/transaction", method: .post, headers: try await AppAPIHarness.headers(user: "device-user"),
                    body: try AppAPIHarness.body(["signed_transaction": jws])
                )
                #expect(posted.status == .ok)
                #expect(try AppAPIHarness.json(posted)["is_premium"] as? Bool == false)

                let completed = try AppAPIHarness.json(
                    try await client.execute(uri: "/v1/purchase-intents/\(id)", method: .get, headers: AppAPIHarness.serviceHeaders))
                #expect(completed["status"] as? String == "completed")
                #expect(completed["transaction_id"] as? String == "6000")
                #expect(completed["environment"] as? String == "sandbox", "seed 003's word: none was declared, so the transaction's")
                #expect(completed["transaction_environment"] as? String == "Sandbox")

                let entitlements = try AppAPIHarness.json(
                    try await client.execute(uri: "/v1/users/dana/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders))
                #expect(entitlements["is_premium"] as? Bool == true)
                let rows = try #require(entitlements["entitlements"] as? [[String: Any]])
                #expect(rows.count == 1)
                #expect(rows.first?["original_transaction_id"] as? String == "6000")
                #expect(rows.first?["status"] as? String == "active")
                #expect(rows.first?["entitled"] as? Bool == true)
                #expect(rows.first?["kind"] as? String == "subscription")
                // Every documented key is present; what the row does not have is null, not left out.
                let row = try #require(rows.first)
                #expect(Set(row.keys) == Self.entitlementKeys)
                #expect(row["revoked_at"] is NSNull && row["grace_period_expires_at"] is NSNull)
            }
            #expect(try await harness.count("SELECT count(*)::int8 FROM user_links WHERE user_id = 'dana'") == 1)
        }
    }

    /// The keys of every row of `GET /v1/users/{id}/entitlements` (docs/openapi.json's EntitlementItem).
    static let entitlementKeys: Set<String> = [
        "kind", "product_id", "product_type", "status", "entitled", "reason", "ends_at", "expires_at", "grace_period_expires_at",
        "purchased_at", "revoked_at", "auto_renew", "ownership", "environment", "bundle_id", "original_transaction_id", "transaction_id",
        "entitlements",
    ]

    /// Seed 003: the web passes the environment the app detected (`sandbox` / `production`) when it creates the intent,
    /// and Xcode StoreKit testing records `xcode`. The intent keeps the declared word, in any case sent; the completing
    /// transaction's own environment is answered beside it (an App Review purchase of an App Store build is Sandbox
    /// under an intent declared `production`). Any other word is refused and creates nothing.
    @Test func anIntentKeepsTheEnvironmentItsHostDeclaredBesideItsTransactions() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                func create(_ environment: Any) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
                        body: try AppAPIHarness.body(["user_id": "fay", "product_id": "com.example.storeledger.monthly", "environment": environment]))
                }
                func find(_ id: String) async throws -> [String: Any] {
                    try AppAPIHarness.json(
                        try await client.execute(uri: "/v1/purchase-intents/\(id)", method: .get, headers: AppAPIHarness.serviceHeaders))
                }
                var declared: [String: String] = [:]
                for (sent, kept) in [("sandbox", "sandbox"), ("production", "production"), ("Xcode", "xcode"), ("SANDBOX", "sandbox")] {
                    let created = try await create(sent)
                    #expect(created.status == .created, "\(sent): \(String(buffer: created.body))")
                    let id = try #require(try AppAPIHarness.json(created)["correlation_id"] as? String)
                    #expect(try AppAPIHarness.json(created)["environment"] as? String == kept, "\(sent)")
                    let found = try await find(id)
                    #expect(found["environment"] as? String == kept, "\(sent)")
                    #expect(found["transaction_environment"] == nil, "\(sent): no transaction yet")
                    declared[sent] = id
                }
                for refused in ["staging", "", "Sandbox ", "LocalTesting"] as [Any] + [1] {
                    let answer = try await create(refused)
                    #expect(answer.status == .badRequest, "\(refused)")
                    #expect(try AppAPIHarness.json(answer)["code"] as? String == "invalid_request", "\(refused)")
                }
                #expect(try await harness.count("SELECT count(*)::int8 FROM purchase_intents") == 4, "a refused intent creates nothing")

                // App Review buys an App Store build's product in the sandbox: the intent completes, and says both.
                let production = try #require(declared["production"])
                let posted = try await client.execute(
                    uri: "/api/v1/payments/appstore/transaction", method: .post, headers: try await AppAPIHarness.headers(user: "reviewer"),
                    body: try AppAPIHarness.body(["signed_transaction": try harness.subscription("6200", token: production)]))
                #expect(posted.status == .ok)
                let completed = try await find(production)
                #expect(completed["status"] as? String == "completed")
                #expect(completed["environment"] as? String == "production")
                #expect(completed["transaction_environment"] as? String == "Sandbox")
            }
        }
    }

    @Test func aNotificationFromAppleAloneCompletesTheIntentAndEntitlesItsUser() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let intent = try await harness.dependencies.intents.create(
                for: "erin", product: "com.example.storeledger.monthly", lifetime: .seconds(600), logger: db.logger)
            let token = intent.correlationID.uuidString.lowercased()
            // No app posts anything: Apple's DID_SUBSCRIBE reaches the receiver and the worker path projects it.
            let pipeline = try LedgerPipeline(db, pki: Self.pki, bundleID: TestSigner.defaultBundleID)
            let transaction = pipeline.signer.transactionPayload(
                transactionID: "6100", purchaseDate: Date().addingTimeInterval(-60), expiresDate: Date().addingTimeInterval(30 * 86_400),
                signedDate: Date(), overrides: ["appAccountToken": token]
            )
            let notification = try pipeline.signer.signedNotification(
                type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: Date(), transaction: transaction)
            try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(notification)"}"#, hint: .sandbox)
            try await pipeline.drain()
            let found = try #require(try await harness.dependencies.intents.find(intent.correlationID, logger: db.logger))
            #expect(found.status(at: Date()) == .completed)
            #expect(found.completion?.transactionID == "6100")
            let summary = try await harness.dependencies.intake.summary(of: "erin", logger: db.logger)
            #expect(summary.isPremium)
            #expect(try await harness.dependencies.intake.summary(of: "someone-else", logger: db.logger).isPremium == false)
        }
    }

    @Test func aServerSideTransactionWithoutAUserGoesToTheOwnerOfItsToken() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            let intent = try await harness.dependencies.intents.create(
                for: "erin", product: "com.example.storeledger.monthly", lifetime: .seconds(600), logger: db.logger)
            let submission = try await harness.dependencies.intake.submit(
                signedTransaction: try harness.subscription("6150", token: intent.correlationID.uuidString), source: .serverAPI, user: nil,
                origin: .init(), logger: db.logger
            )
            guard case .accepted(let accepted) = submission else {
                Issue.record("not accepted: \(submission)")
                return
            }
            #expect(accepted.owner == "erin")
            #expect(accepted.link == .linked)
            #expect(try await harness.count("SELECT count(*)::int8 FROM events WHERE source = 'server_api' AND user_id IS NULL") == 1)
        }
    }

    @Test func intentsExpireAndUnknownOnesAre404() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki, intentLifetime: .seconds(0))
            try await harness.app.test(.router) { client in
                let created = try AppAPIHarness.json(try await Self.createIntent(client, user: "fay", product: "p"))
                let id = try #require(created["correlation_id"] as? String)
                let later = try AppAPIHarness.json(
                    try await client.execute(uri: "/v1/purchase-intents/\(id)", method: .get, headers: AppAPIHarness.serviceHeaders))
                #expect(later["status"] as? String == "expired")
                let missing = try await client.execute(uri: "/v1/purchase-intents/\(UUID())", method: .get, headers: AppAPIHarness.serviceHeaders)
                #expect(missing.status == .notFound)
                #expect(try AppAPIHarness.json(missing)["code"] as? String == "intent_not_found")
                let notUUID = try await client.execute(uri: "/v1/purchase-intents/nope", method: .get, headers: AppAPIHarness.serviceHeaders)
                #expect(notUUID.status == .badRequest)
                let noUser = try await client.execute(
                    uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
                    body: try AppAPIHarness.body(["product_id": "p"])
                )
                #expect(noUser.status == .badRequest)
            }
        }
    }

    /// A host app (seed 003's is a Rails app) sends its numeric user id as a JSON number: it names the user of its
    /// digits, as a numeric `sub` does. Before, it was a 400 for its type.
    @Test func aNumericUserIDNamesTheUserOfItsDigits() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let created = try await client.execute(
                    uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
                    body: try AppAPIHarness.body(["user_id": 42, "product_id": "p"]))
                #expect(created.status == .created)
                #expect(try AppAPIHarness.json(created)["user_id"] as? String == "42")
                // A string is taken as it is, as a JWT's is: " 42" is not "42".
                let spaced = try await client.execute(
                    uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
                    body: try AppAPIHarness.body(["user_id": " 42", "product_id": "p"]))
                #expect(try AppAPIHarness.json(spaced)["user_id"] as? String == " 42")
                for user in [4.5, true, ""] as [Any] {
                    let refused = try await client.execute(
                        uri: "/v1/purchase-intents", method: .post, headers: AppAPIHarness.serviceHeaders,
                        body: try AppAPIHarness.body(["user_id": user, "product_id": "p"]))
                    #expect(refused.status == .badRequest, "\(user)")
                }
            }
        }
    }

    @Test func aSignedInUserCreatesIntentsOnlyForThemselfAndSeesOnlyTheirOwn() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let gina = try await AppAPIHarness.headers(user: "gina")
                let forOther = try await client.execute(
                    uri: "/v1/purchase-intents", method: .post, headers: gina, body: try AppAPIHarness.body(["user_id": "hank", "product_id": "p"])
                )
                #expect(forOther.status == .forbidden)
                // An empty user_id names no one: the intent is the signed-in user's, as without the field.
                let emptyNamed = try await client.execute(
                    uri: "/v1/purchase-intents", method: .post, headers: gina, body: try AppAPIHarness.body(["user_id": "", "product_id": "p"])
                )
                #expect(emptyNamed.status == .created)
                #expect(try AppAPIHarness.json(emptyNamed)["user_id"] as? String == "gina")
                let own = try AppAPIHarness.json(
                    try await client.execute(
                        uri: "/v1/purchase-intents", method: .post, headers: gina, body: try AppAPIHarness.body(["product_id": "p"])
                    ))
                #expect(own["user_id"] as? String == "gina")
                let id = try #require(own["correlation_id"] as? String)
                let byOther = try await client.execute(
                    uri: "/v1/purchase-intents/\(id)", method: .get, headers: try await AppAPIHarness.headers(user: "hank"))
                #expect(byOther.status == .notFound)
            }
        }
    }

    @Test func theCatalogDecidesWhatIsPremiumAndNamesTheSubscriptionType() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki, catalog: Self.catalog)
            try await harness.app.test(.router) { client in
                let ivy = try await AppAPIHarness.headers(user: "ivy")
                let stickers = try harness.nonConsumable("6300", product: "com.example.storeledger.stickers")
                let answer = try AppAPIHarness.json(
                    try await client.execute(
                        uri: "/api/v1/payments/appstore/transaction", method: .post, headers: ivy,
                        body: try AppAPIHarness.body(["signed_transaction": stickers])
                    ))
                #expect(answer["is_premium"] as? Bool == false)
                var status = try AppAPIHarness.json(try await client.execute(uri: "/api/subscription/status", method: .get, headers: ivy))
                #expect(status["isPremium"] as? Bool == false)

                let yearly = try harness.subscription("6301", product: "com.example.storeledger.yearly", expiresIn: 300 * 86_400)
                _ = try await client.execute(
                    uri: "/api/v1/payments/appstore/transaction", method: .post, headers: ivy,
                    body: try AppAPIHarness.body(["signed_transaction": yearly])
                )
                status = try AppAPIHarness.json(try await client.execute(uri: "/api/subscription/status", method: .get, headers: ivy))
                #expect(status["isPremium"] as? Bool == true)
                #expect(status["subscriptionType"] as? String == "yearly")
                #expect(AppAPIHarness.javaScriptDate(status, "expirationDate") != nil)

                let entitlements = try AppAPIHarness.json(
                    try await client.execute(uri: "/v1/users/ivy/entitlements", method: .get, headers: AppAPIHarness.serviceHeaders))
                let rows = try #require(entitlements["entitlements"] as? [[String: Any]])
                #expect(Set(rows.compactMap { ($0["entitlements"] as? [String])?.first }) == ["premium", "stickers"])
            }
        }
    }

    @Test func withoutACatalogStatusAnswersAsSeed001sBackendDidAfterALapseToo() async throws {
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki)
            try await harness.app.test(.router) { client in
                let jo = try await AppAPIHarness.headers(user: "jo")
                func status() async throws -> [String: Any] {
                    try AppAPIHarness.json(try await client.execute(uri: "/api/subscription/status", method: .get, headers: jo))
                }
                func submit(_ signed: String) async throws {
                    let response = try await client.execute(
                        uri: "/api/v1/payments/appstore/transaction", method: .post, headers: jo,
                        body: try AppAPIHarness.body(["signed_transaction": signed]))
                    #expect(response.status == .ok)
                }
                // Never subscribed: no type, no date.
                var answer = try await status()
                #expect(answer["isPremium"] as? Bool == false)
                #expect(answer["subscriptionType"] == nil && answer["expirationDate"] == nil)

                // A monthly subscription that lapsed ten days ago: not premium, but its type and past expiry are
                // still given, as seed 001's backend kept the user's last premium record.
                try await submit(try harness.subscription("7100", product: "com.example.storeledger.monthly", expiresIn: -10 * 86_400))
                answer = try await status()
                #expect(answer["isPremium"] as? Bool == false)
                #expect(answer["subscriptionType"] as? String == "monthly")
                let lapsed = try #require(AppAPIHarness.javaScriptDate(answer, "expirationDate"))
                #expect(lapsed < Date().addingTimeInterval(-9 * 86_400))

                // Then one refunded an hour ago whose period would have run 20 more days: its date is the refund's,
                // past, not the expiry ahead (a client comparing expirationDate with now must not read premium).
                let refunded = try harness.signer.signedTransaction(
                    harness.signer.transactionPayload(
                        transactionID: "7150", productID: "com.example.storeledger.premium.monthly",
                        purchaseDate: Date().addingTimeInterval(-10 * 86_400),
                        expiresDate: Date().addingTimeInterval(20 * 86_400), signedDate: Date(),
                        overrides: ["revocationDate": TestSigner.milliseconds(Date().addingTimeInterval(-3_600)), "revocationReason": 0]))
                try await submit(refunded)
                answer = try await status()
                #expect(answer["isPremium"] as? Bool == false)
                #expect(answer["subscriptionType"] as? String == "monthly")
                let revoked = try #require(AppAPIHarness.javaScriptDate(answer, "expirationDate"))
                #expect(revoked < Date() && revoked > Date().addingTimeInterval(-7_200))

                // Then an active subscription whose product id does not say monthly: seed 001's rule names it yearly.
                try await submit(try harness.subscription("7200", product: "com.example.storeledger.annual", expiresIn: 200 * 86_400))
                answer = try await status()
                #expect(answer["isPremium"] as? Bool == true)
                #expect(answer["subscriptionType"] as? String == "yearly")
                let expires = try #require(AppAPIHarness.javaScriptDate(answer, "expirationDate"))
                #expect(expires > Date().addingTimeInterval(199 * 86_400))
            }
        }
    }

    @Test func afterALapseStatusShowsTheLastPremiumSubscriptionNotAnotherOne() async throws {
        let catalog = ProductCatalog(products: [
            .init(productID: "com.example.storeledger.monthly", entitlements: ["premium"], period: SubscriptionPeriod(value: 1, unit: .month)),
            .init(productID: "com.example.storeledger.extras", entitlements: ["extras"], period: SubscriptionPeriod(value: 1, unit: .year)),
        ])
        try await TestDatabase.withFresh { db in
            let harness = try await AppAPIHarness(db, pki: Self.pki, catalog: catalog)
            try await harness.app.test(.router) { client in
                let kim = try await AppAPIHarness.headers(user: "kim")
                for signed in [
                    try harness.subscription("7300", product: "com.example.storeledger.monthly", expiresIn: -5 * 86_400),
                    try harness.subscription("7400", product: "com.example.storeledger.extras", expiresIn: 300 * 86_400),
                ] {
                    let response = try await client.execute(
                        uri: "/api/v1/payments/appstore/transaction", method: .post, headers: kim,
                        body: try AppAPIHarness.body(["signed_transaction": signed]))
                    #expect(response.status == .ok)
                }
                // The running subscription grants extras, not premium: the answer is the lapsed premium one.
                let answer = try AppAPIHarness.json(try await client.execute(uri: "/api/subscription/status", method: .get, headers: kim))
                #expect(answer["isPremium"] as? Bool == false)
                #expect(answer["subscriptionType"] as? String == "monthly")
                let ended = try #require(AppAPIHarness.javaScriptDate(answer, "expirationDate"))
                #expect(ended < Date().addingTimeInterval(-4 * 86_400))
            }
        }
    }

    @Test func theCatalogFileParsesAndItsErrorsNameTheProblem() throws {
        let catalog = try ProductCatalog(
            json: Data(
                #"""
                {"products": [
                  {"product_id": "a.monthly", "period": "P1M", "display_name": "Monthly"},
                  {"product_id": "a.weekly", "entitlements": ["premium", "extra"], "period": "P1W"},
                  {"product_id": "a.coins", "entitlements": []}
                ]}
                """#.utf8))
        // An absent `entitlements` is kept absent: the default for the product's type, decided by entitlements_at.
        #expect(catalog.products["a.monthly"]?.entitlements == nil)
        #expect(catalog.products["a.weekly"]?.entitlements == ["premium", "extra"])
        #expect(catalog.products["a.coins"]?.entitlements == [])
        #expect(catalog.products["unknown"] == nil)
        #expect(catalog.period(of: "a.weekly")?.months == 12.0 / 52.0)
        #expect(catalog.period(of: "a.monthly")?.plainName == "monthly")
        #expect(SubscriptionPeriod(iso8601: "P3M")?.plainName == "quarterly")
        #expect(SubscriptionPeriod(iso8601: "P0M") == nil)
        #expect(SubscriptionPeriod(iso8601: "1M") == nil)

        for (text, fragment) in [
            (#"{"products": [{"period": "P1M"}]}"#, "product_id"),
            (#"{"products": [{"product_id": "x", "period": "monthly"}]}"#, "monthly"),
            (#"{"products": [{"product_id": "x"}, {"product_id": "x"}]}"#, "twice"),
            (#"{"items": []}"#, "products"),
        ] {
            #expect {
                _ = try ProductCatalog(json: Data(text.utf8))
            } throws: { error in
                "\(error)".contains(fragment)
            }
        }
    }
}
