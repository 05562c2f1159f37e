import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import PostgresNIO
import Prometheus
import StoreLedgerCore
import StoreLedgerHTTP
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

@Suite("Console: customer lookup, state now, timelines and escaping")
struct ConsoleCustomerTests {
    static let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    static let otherToken = "0b7d4a52-93c4-4b1e-8a3e-6f2d1c9e5a10"
    static let hostileUser = "<script>alert('u')</script>"

    /// A console over a ledger played by the simulator: `70001` (Sandbox, renewals then expiry, token ``token`` owned by
    /// `user-42`), `70001` again in Production (token ``otherToken``, no owner), `80001` (Sandbox, bought yesterday,
    /// no token, entitled), and a rejected event whose body holds a script tag.
    func withLedger(_ body: @Sendable @escaping (TestDatabase, ConsoleBrowser, Int64) async throws -> Void) async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let setup = LifecycleSetup(
                originalTransactionID: "70001", start: 1_700_000_000_000, bundleID: "com.example.app", appAppleID: 1_234,
                randomNotificationUUIDs: false
            )
            try await pipeline.append(SimulatedLifecycle.renewals.facts(setup))
            var production = SubscriptionLifecycleBuilder(
                originalTransactionID: "70001", start: 1_700_100_000_000, environment: .production, bundleID: "com.example.app",
                appAccountToken: AppAccountToken(Self.otherToken)
            )
            production.playRenewalsThenExpiry(renewals: 1)
            try await pipeline.append(production.facts)
            let now = Int64(Date().timeIntervalSince1970 * 1_000)
            var current = SubscriptionLifecycleBuilder(
                originalTransactionID: "80001", start: Timestamp(millisecondsSince1970: Double(now - 86_400_000)), bundleID: "com.example.app",
                appAccountToken: nil
            )
            current.subscribe()
            try await pipeline.append(current.facts)
            let hostile = try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"<script>alert('b')</script>"}"#)
            try await pipeline.drain()
            try await db.client.query(
                "INSERT INTO app_account_tokens (app_account_token, user_id, origin) VALUES (\(Self.token), 'user-42', 'purchase_intent')",
                logger: db.logger
            )
            try await Self.withConsole(db) { browser in try await body(db, browser, hostile.rawValue) }
        }
    }

    /// The admin router with the console on over `db`, and a browser signed in to it as the viewer `sam`.
    static func withConsole(_ db: TestDatabase, _ body: @Sendable @escaping (ConsoleBrowser) async throws -> Void) async throws {
        let console = try ConsoleController(configuration: ConsoleConfiguration(enabled: true), client: db.client)
        #expect(
            try await ConsoleUserStore(client: db.client).create(
                name: "sam", role: .viewer, passwordHash: try ConsolePassword.hash("pw", rounds: 1_000), logger: db.logger
            ))
        let router = AdminApplication.router(
            registry: PrometheusCollectorRegistry(), client: db.client, migrator: Migrator(migrations: try Migration.bundled()), console: console
        )
        try await Application(router: router).test(.router) { client in
            let browser = ConsoleBrowser(client)
            #expect(try await browser.signIn("sam", "pw").status == .seeOther)
            try await body(browser)
        }
    }

    /// Every match of `pattern`'s first capture group in `text`, in order.
    static func captures(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    /// The search is a GET form: a browser writes a space as `+` (an id pasted with a space around it), which must
    /// read as the space it stands for, trimmed like any other.
    @Test func aSearchAsTheBrowsersFormWritesItFindsTheCustomer() async throws {
        try await withLedger { db, browser, _ in
            // A malformed escape typed by hand is searched for as written (nothing matches), not dropped.
            let typed = try await browser.get("/console/customers?q=70004%")
            #expect(typed.status == .ok)
            #expect(typed.html.contains("70004%"))
            for query in ["q=+user-42+", "q=70004+", "q=++70004"] {
                let response = try await browser.get("/console/customers?\(query)")
                #expect(response.status == .seeOther, "\(query)")
                #expect(response.location == "/console/customers/user-42", "\(query)")
            }
        }
    }

    /// In a ledger of several apps, one key in two apps is two customers (user ids and tokens are each app's own):
    /// listed with their apps, each page showing its app's purchases only, not one page whose "entitled" mixes them.
    @Test func oneKeyInTwoAppsIsTwoCustomers() async throws {
        try await TestDatabase.withFresh { db in
            let token = "33333333-3333-4333-8333-333333333333"
            for (bundle, original) in [("com.example.app", "91001"), ("com.example.other", "92001")] {
                let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki, bundleID: bundle)
                var builder = SubscriptionLifecycleBuilder(
                    originalTransactionID: OriginalTransactionID(original), start: 1_700_000_000_000, bundleID: BundleID(bundle),
                    appAccountToken: AppAccountToken(token))
                builder.subscribe()
                try await pipeline.append(builder.facts)
                try await pipeline.drain()
            }
            #expect(try await db.scalar("SELECT count(DISTINCT bundle_id) FROM subscriptions") == 2)
            try await Self.withConsole(db) { browser in
                let found = try await browser.get("/console/customers?q=\(token)")
                #expect(found.status == .ok)
                let links = try Self.captures(#"<tr class="customer-result"><td><a href="([^"]+)""#, in: found.html)
                #expect(
                    links.sorted() == ["/console/customers/\(token)?app=com.example.app", "/console/customers/\(token)?app=com.example.other"])
                #expect(
                    try Self.captures(#"<td data-field="app">([^<]+)</td>"#, in: found.html).sorted() == ["com.example.app", "com.example.other"])
                let other = try await browser.get("/console/customers/\(token)?app=com.example.other")
                #expect(other.html.contains("92001") && !other.html.contains("91001"))
                #expect(other.html.contains(#"id="customer-app""#))
                // Without an app, the page is every app's, as before.
                let all = try await browser.get("/console/customers/\(token)")
                #expect(all.html.contains("92001") && all.html.contains("91001"))
            }
        }
    }

    @Test func eachOfTheFourKeysFindsTheCustomer() async throws {
        try await withLedger { db, browser, _ in
            // Sandbox 70001 is user-42's (through the token it carries); its third period's transaction id is 70004 (the
            // Production subscription's transactions are 70002 and 70003).
            for q in ["user-42", Self.token, Self.token.uppercased(), "70004"] {
                let response = try await browser.get("/console/customers?q=\(ConsoleBrowser.encode(q))")
                #expect(response.status == .seeOther, "\(q)")
                #expect(response.location == "/console/customers/user-42", "\(q)")
            }
            // The Production subscription with the same original transaction id belongs to someone else: two customers.
            for q in ["70001", "70002"] {
                let both = try await browser.get("/console/customers?q=\(q)")
                #expect(both.status == .ok)
                let links = try Self.captures(#"<tr class="customer-result"><td><a href="([^"]+)""#, in: both.html)
                #expect(links.sorted() == ["/console/customers/\(Self.otherToken)", "/console/customers/user-42"], "\(q)")
            }
            let both = try await browser.get("/console/customers?q=70001")
            #expect(both.html.contains(#"<table id="customer-results">"#))
            let links = try Self.captures(#"<tr class="customer-result"><td><a href="([^"]+)""#, in: both.html)
            #expect(links.sorted() == ["/console/customers/\(Self.otherToken)", "/console/customers/user-42"])
            // One with neither owner nor token is keyed by its original transaction id.
            let alone = try await browser.get("/console/customers?q=80001")
            #expect(alone.location == "/console/customers/80001")
            // Nothing.
            let none = try await browser.get("/console/customers?q=nobody")
            #expect(none.status == .ok)
            #expect(none.html.contains(#"id="no-results""#))
            #expect(!none.html.contains("customer-result"))
            _ = db
        }
    }

    @Test func aCustomerPageShowsStateNowAsTheAPIDefinesItAndTheTimelineInSignedOrder() async throws {
        try await withLedger { db, browser, _ in
            let page = try await browser.get("/console/customers/user-42")
            #expect(page.status == .ok)
            let html = page.html
            #expect(try Self.captures(#"<section class="(subscription|purchase) card""#, in: html) == ["subscription"])
            #expect(html.contains(#"<dd class="mono" data-field="original-transaction-id">70001</dd>"#))
            #expect(html.contains(#"<span data-field="product">com.example.app.monthly</span>"#))
            let state = try #require(try Self.captures(#"data-field="state"><span class="badge [a-z]+">([^<]+)<"#, in: html).first)
            let entitledNow = try await db.scalar(
                "SELECT count(*) FROM entitlements_now WHERE environment = 'Sandbox' AND original_transaction_id = '70001' AND entitled_now"
            )
            #expect(entitledNow == 0)
            #expect(state == "not entitled")

            // The timeline: every notification about it and the transaction the app posted, in signed order.
            let types = try Self.captures(#"<span class="type" data-field="type">([^<]+)</span>"#, in: html)
            #expect(types == ["SUBSCRIBED", "TRANSACTION", "DID_RENEW", "DID_RENEW", "DID_RENEW", "DID_CHANGE_RENEWAL_STATUS", "EXPIRED"])
            let subtypes = try Self.captures(#"<span data-field="subtype">([^<]*)</span>"#, in: html)
            #expect(subtypes == ["INITIAL_BUY", "PURCHASE", "", "", "", "AUTO_RENEW_DISABLED", "VOLUNTARY"])
            let dates = try Self.captures(#"<span class="when" data-field="signed-date">([^<]+)</span>"#, in: html)
            #expect(dates.count == 7)
            #expect(dates == dates.sorted())
            #expect(dates.first == "2023-11-14 22:13:20 UTC")
            // What each entry changed: the first renewal moves the expiry on by a period.
            #expect(html.contains("expires: 2023-12-14 22:13:20 UTC → 2024-01-13 22:13:20 UTC"))
            #expect(html.contains("auto-renew: on → off"))
            // Every entry links to the event that brought it, and that event page exists.
            let events = try Self.captures(#"<a class="raw-event" href="/console/events/([0-9]+)">"#, in: html)
            #expect(events.count == 7)
            for id in Set(events) { #expect(try await browser.get("/console/events/\(id)").status == .ok) }
            let notificationEvents = try await db.client.query(
                "SELECT first_event_id FROM notifications WHERE environment = 'Sandbox' AND original_transaction_id = '70001' ORDER BY signed_at",
                logger: db.logger
            ).decode(Int64.self).reduce(into: [Int64]()) { $0.append($1) }
            #expect(events.enumerated().filter { $0.offset != 1 }.map { Int64($0.element)! } == notificationEvents)

            // Bought yesterday: entitled now.
            let current = try await browser.get("/console/customers/80001")
            #expect(try Self.captures(#"data-field="state"><span class="badge [a-z]+">([^<]+)<"#, in: current.html) == ["entitled"])
            #expect(current.html.contains(#"<dd data-field="entitlements">premium</dd>"#))
        }
    }

    /// "Why did I lose premium?" when the notification saying the renewal failed never arrived, but a sync fetched
    /// Apple's renewal info, which put the subscription in billing retry: the timeline shows that renewal info and the
    /// status it moved to. Before, it ended at the last renewal, "active", under a state of "not entitled".
    @Test func theTimelineShowsRenewalInfoFetchedFromApple() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let day: TimeInterval = 86_400
            let bought = Date().addingTimeInterval(-40 * day)
            let expired = bought.addingTimeInterval(30 * day)
            let transaction = pipeline.signer.transactionPayload(
                transactionID: "90001", originalTransactionID: "90001", productID: "com.example.app.monthly", purchaseDate: bought,
                expiresDate: expired, signedDate: bought)
            let subscribed = pipeline.signer.notificationPayload(
                type: "SUBSCRIBED", subtype: "INITIAL_BUY", signedDate: bought,
                signedTransactionInfo: try pipeline.signer.sign(json: transaction), signedRenewalInfo: nil, status: 1)
            try await pipeline.append(
                source: .appleNotification, body: #"{"signedPayload":"\#(try pipeline.signer.sign(json: subscribed))"}"#)
            let retrying = pipeline.signer.renewalInfoPayload(
                originalTransactionID: "90001", productID: "com.example.app.monthly", renewalDate: expired,
                signedDate: expired.addingTimeInterval(2 * day), overrides: ["isInBillingRetryPeriod": true, "expirationIntent": 2])
            try await pipeline.append(
                source: .serverAPI, body: #"{"signedRenewalInfo":"\#(try pipeline.signer.signedRenewalInfo(retrying))"}"#)
            try await pipeline.drain()
            #expect(
                try await db.scalar("SELECT count(*) FROM subscriptions WHERE original_transaction_id = '90001' AND status = 'billing_retry'") == 1)
            try await Self.withConsole(db) { browser in
                let html = try await browser.get("/console/customers/90001").html
                let types = try Self.captures(#"<span class="type" data-field="type">([^<]+)</span>"#, in: html)
                #expect(types == ["SUBSCRIBED", "RENEWAL_INFO"])
                // The renewal info's own event page shows what was verified and recorded, not "nothing was".
                let events = try Self.captures(#"<a class="raw-event" href="/console/events/([0-9]+)">"#, in: html)
                let renewalEvent = try await browser.get("/console/events/\(try #require(events.last))").html
                #expect(renewalEvent.contains(#"<span class="mono" data-field="signed-member">signedRenewalInfo</span>, as verified"#))
                #expect(renewalEvent.contains("isInBillingRetryPeriod"))
                #expect(!renewalEvent.contains("Nothing verified was recorded"))
                let subtypes = try Self.captures(#"<span data-field="subtype">([^<]*)</span>"#, in: html)
                #expect(subtypes.last == "in billing retry")
                #expect(html.contains("status: 1 active → 3 billing retry"), "\(html)")
            }
        }
    }

    /// A refund of an older period, signed after later renewals, is marked as about that earlier period and compared
    /// with what was known of that period, not with the current one: before, it read `expires: <April> → <February>` and
    /// `transaction: 1003 → 1001`, as though the refund had cut premium short, while the state said entitled.
    @Test func anEntryAboutAnEarlierPeriodIsComparedWithThatPeriod() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let day: TimeInterval = 86_400
            let start = Date().addingTimeInterval(-70 * day)
            func period(_ n: Int) -> [String: Any] {
                pipeline.signer.transactionPayload(
                    transactionID: "9100\(n)", originalTransactionID: "91001", productID: "com.example.app.monthly",
                    purchaseDate: start.addingTimeInterval(Double(n - 1) * 30 * day), expiresDate: start.addingTimeInterval(Double(n) * 30 * day),
                    signedDate: start.addingTimeInterval(Double(n - 1) * 30 * day))
            }
            func notify(_ type: String, _ subtype: String?, _ transaction: [String: Any], at signed: Date) async throws {
                let payload = pipeline.signer.notificationPayload(
                    type: type, subtype: subtype, signedDate: signed, signedTransactionInfo: try pipeline.signer.sign(json: transaction),
                    signedRenewalInfo: nil, status: 1)
                try await pipeline.append(
                    source: .appleNotification, body: #"{"signedPayload":"\#(try pipeline.signer.sign(json: payload))"}"#)
            }
            try await notify("SUBSCRIBED", "INITIAL_BUY", period(1), at: start)
            try await notify("DID_RENEW", nil, period(2), at: start.addingTimeInterval(30 * day))
            try await notify("DID_RENEW", nil, period(3), at: start.addingTimeInterval(60 * day))
            var refunded = period(1)
            let refundedAt = start.addingTimeInterval(65 * day)
            refunded["signedDate"] = TestSigner.milliseconds(refundedAt)
            refunded["revocationDate"] = TestSigner.milliseconds(refundedAt)
            refunded["revocationReason"] = 0
            try await notify("REFUND", nil, refunded, at: refundedAt)
            try await pipeline.drain()
            try await Self.withConsole(db) { browser in
                let html = try await browser.get("/console/customers/91001").html
                #expect(try Self.captures(#"data-field="state"><span class="badge [a-z]+">([^<]+)<"#, in: html) == ["entitled"])
                #expect(try Self.captures(#"data-field="earlier-period">about an earlier period \(transaction ([0-9]+)\)"#, in: html) == ["91001"])
                let changes = try Self.captures(#"<ul class="changes" data-field="changes">(.*?)</ul>"#, in: html)
                #expect(changes.count == 4)
                // The refund's own change: the first period revoked; nothing about the current period's expiry.
                #expect(changes.last?.contains("revoked: ") == true, "\(changes)")
                #expect(changes.last?.contains("expires") == false, "\(changes)")
                #expect(changes.last?.contains("transaction") == false, "\(changes)")
                #expect(!html.contains("transaction: 91003 → 91001"))
            }
        }
    }

    /// An upgrade from a yearly product to a monthly one is purchased later but expires sooner than the year it
    /// replaces: it is the current period, not an earlier one, and so are the monthly renewals after it.
    @Test func anUpgradeToAShorterProductIsTheCurrentPeriod() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let day: TimeInterval = 86_400
            let start = Date().addingTimeInterval(-70 * day)
            func transaction(_ id: String, _ product: String, from: TimeInterval, to: TimeInterval) -> [String: Any] {
                pipeline.signer.transactionPayload(
                    transactionID: id, originalTransactionID: "92001", productID: product, purchaseDate: start.addingTimeInterval(from * day),
                    expiresDate: start.addingTimeInterval(to * day), signedDate: start.addingTimeInterval(from * day))
            }
            func notify(_ type: String, _ subtype: String?, _ transaction: [String: Any], at offset: TimeInterval) async throws {
                let payload = pipeline.signer.notificationPayload(
                    type: type, subtype: subtype, signedDate: start.addingTimeInterval(offset * day),
                    signedTransactionInfo: try pipeline.signer.sign(json: transaction), signedRenewalInfo: nil, status: 1)
                try await pipeline.append(
                    source: .appleNotification, body: #"{"signedPayload":"\#(try pipeline.signer.sign(json: payload))"}"#)
            }
            try await notify("SUBSCRIBED", "INITIAL_BUY", transaction("92001", "com.example.app.yearly", from: 0, to: 365), at: 0)
            try await notify("DID_CHANGE_RENEWAL_PREF", "UPGRADE", transaction("92002", "com.example.app.pro", from: 30, to: 60), at: 30)
            try await notify("DID_RENEW", nil, transaction("92003", "com.example.app.pro", from: 60, to: 90), at: 60)
            try await pipeline.drain()
            try await Self.withConsole(db) { browser in
                let html = try await browser.get("/console/customers/92001").html
                #expect(!html.contains(#"data-field="earlier-period""#), "\(html)")
                #expect(html.contains("transaction: 92002 → 92003"))
            }
        }
    }

    /// A non-consumable restored on another device is a transaction of its own, purchased (restored) later. A refund of
    /// the purchase revokes the copy too: it is no "earlier period" that leaves the state now unchanged.
    @Test func aRefundOfARestoredPurchaseIsNoEarlierPeriod() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let day: TimeInterval = 86_400
            let bought = Date().addingTimeInterval(-60 * day)
            func unlock(_ id: String, purchased: Date, signed: Date, revoked: Date? = nil) -> [String: Any] {
                var overrides: [String: Any] = ["originalTransactionId": "93001"]
                if let revoked { overrides.merge(["revocationDate": TestSigner.milliseconds(revoked), "revocationReason": 0]) { $1 } }
                return pipeline.signer.transactionPayload(
                    transactionID: id, productID: "com.example.app.unlock", purchaseDate: purchased, signedDate: signed, type: "Non-Consumable",
                    overrides: overrides)
            }
            func notify(_ type: String, _ transaction: [String: Any], at date: Date) async throws {
                let payload = pipeline.signer.notificationPayload(
                    type: type, subtype: nil, signedDate: date, signedTransactionInfo: try pipeline.signer.sign(json: transaction),
                    signedRenewalInfo: nil, status: nil)
                try await pipeline.append(
                    source: .appleNotification, body: #"{"signedPayload":"\#(try pipeline.signer.sign(json: payload))"}"#)
            }
            try await notify("ONE_TIME_CHARGE", unlock("93001", purchased: bought, signed: bought), at: bought)
            let restored = bought.addingTimeInterval(20 * day)
            let copy = unlock("93002", purchased: restored, signed: restored)
            try await pipeline.append(source: .client, body: #"{"signedTransaction":"\#(try pipeline.signer.sign(json: copy))"}"#)
            let refunded = bought.addingTimeInterval(30 * day)
            try await notify("REFUND", unlock("93001", purchased: bought, signed: refunded, revoked: refunded), at: refunded)
            try await pipeline.drain()
            try await Self.withConsole(db) { browser in
                let html = try await browser.get("/console/customers/93001").html
                #expect(html.contains(#"<span class="type" data-field="type">REFUND</span>"#), "\(html)")
                #expect(!html.contains(#"data-field="earlier-period""#), "\(html)")
            }
        }
    }

    /// "Why did I lose premium?" when another account restored the purchase: the timeline shows each link and transfer
    /// (`user_link_history`) with the users, the reason and the event that caused it.
    @Test func theTimelineShowsWhoThePurchaseWasLinkedToAndMovedTo() async throws {
        try await withLedger { db, browser, _ in
            let event =
                try await db.client.query(
                    "SELECT first_event_id FROM notifications WHERE environment = 'Sandbox' AND original_transaction_id = '70001' ORDER BY signed_at DESC LIMIT 1",
                    logger: db.logger
                ).decode(Int64.self).firstAfterReadingAll() ?? 0
            try await db.client.query(
                """
                INSERT INTO user_link_history (environment, original_transaction_id, from_user_id, to_user_id, change, reason, event_id, recorded_at)
                VALUES ('Sandbox', '70001', NULL, 'user-42', 'linked', 'purchase', \(event), '2025-03-01T00:00:00Z'),
                       ('Sandbox', '70001', 'user-42', 'user-7', 'transferred', 'restore', \(event), '2025-03-02T00:00:00Z')
                """, logger: db.logger)
            let html = try await browser.get("/console/customers/70001").html
            let types = try Self.captures(#"<span class="type" data-field="type">([^<]+)</span>"#, in: html)
            #expect(types.suffix(2) == ["LINKED", "TRANSFERRED"], "\(types)")
            // An ownership change says nothing of expiry, transaction or status: none is shown (the purchase's own,
            // today's, were once, through the template's enclosing context).
            let ownershipEntries = try Self.captures(
                #"(?s)(<li class="timeline-entry">(?:(?!</li>).)*(?:LINKED|TRANSFERRED)(?:(?!</li>).)*</li>)"#, in: html)
            #expect(ownershipEntries.count == 2, "\(html)")
            for entry in ownershipEntries {
                #expect(!entry.contains(#"data-field="expires""#) && !entry.contains("· transaction") && !entry.contains("· status"), "\(entry)")
            }
            let subtypes = try Self.captures(#"<span data-field="subtype">([^<]*)</span>"#, in: html)
            #expect(subtypes.contains("to user-42 (purchase)"))
            #expect(subtypes.contains("user-42 → user-7 (restore)"))
            #expect(html.contains(#"<span class="when" data-field="signed-date">2025-03-02 00:00:00 UTC</span>"#))
            #expect(try Self.captures(#"<a class="raw-event" href="/console/events/([0-9]+)">"#, in: html).suffix(2) == ["\(event)", "\(event)"])
            // Then user-9 restored it: support asked about user-7, who no longer holds it and owns no token. The search
            // by their id finds it (the one customer it names is its owner now, whose page shows the transfer).
            try await db.client.query(
                """
                INSERT INTO user_link_history (environment, original_transaction_id, from_user_id, to_user_id, change, reason, event_id, recorded_at)
                VALUES ('Sandbox', '70001', 'user-7', 'user-9', 'transferred', 'restore', \(event), '2025-03-03T00:00:00Z');
                """, logger: db.logger)
            try await db.client.query(
                "INSERT INTO user_links (environment, original_transaction_id, user_id, event_id) VALUES ('Sandbox', '70001', 'user-9', \(event))",
                logger: db.logger)
            let search = try await browser.get("/console/customers?q=user-7")
            #expect(search.status == .seeOther)
            #expect(search.location == "/console/customers/user-9")
            let owner = try await browser.get("/console/customers/user-9").html
            #expect(owner.contains(#"<dd class="mono" data-field="original-transaction-id">70001</dd>"#))
            #expect(owner.contains("user-7 → user-9 (restore)"))
            let page = try await CustomerLookupStore(client: db.client).purchases(matching: "user-7", logger: db.logger)
            #expect(page.purchases.map(\.matchedBy) == ["user id (an earlier owner)"])
        }
    }

    /// A purchase with more timeline entries than are shown keeps the latest: they explain the state now.
    @Test func aLongTimelineShowsItsLatestEntries() async throws {
        try await withLedger { db, browser, _ in
            let limit = CustomerLookupStore.timelineLimit
            try await db.client.query(
                """
                INSERT INTO user_link_history (environment, original_transaction_id, from_user_id, to_user_id, change, reason, event_id, recorded_at)
                SELECT 'Sandbox', '70001', 'user-' || (i - 1), 'user-' || i, 'transferred', 'restore', e.id,
                       timestamptz '2030-01-01T00:00:00Z' + make_interval(mins => i)
                FROM generate_series(1, \(limit)::int) AS i, (SELECT min(id) AS id FROM events) e
                """, logger: db.logger)
            let entries = try await CustomerLookupStore(client: db.client).timeline(
                environment: "Sandbox", originalTransactionID: "70001", logger: db.logger)
            #expect(entries.count == limit)
            #expect(entries.last?.subtype == "user-\(limit - 1) → user-\(limit) (restore)")
            #expect(entries.first?.subtype == "user-0 → user-1 (restore)", "the oldest entries went, the transfers stayed")
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.signedAt <= $1.signedAt }, "oldest first, as always")
            let html = try await browser.get("/console/customers/70001").html
            #expect(html.contains("Only the latest entries are shown."))
        }
    }

    @Test func hostileValuesAreEscapedEverywhere() async throws {
        try await withLedger { db, browser, hostileEvent in
            try await db.client.query(
                "INSERT INTO app_account_tokens (app_account_token, user_id, origin) VALUES (\(Self.otherToken), \(Self.hostileUser), 'client')",
                logger: db.logger
            )
            let search = try await browser.get("/console/customers?q=\(ConsoleBrowser.encode(Self.hostileUser))")
            #expect(search.status == .seeOther)
            let location = try #require(search.location)
            #expect(location == "/console/customers/%3Cscript%3Ealert%28%27u%27%29%3C%2Fscript%3E")
            let page = try await browser.get(location)
            #expect(page.status == .ok)
            #expect(page.html.contains("&lt;script&gt;alert(&#39;u&#39;)&lt;/script&gt;"))
            #expect(!page.html.contains("<script"))
            let nothing = try await browser.get("/console/customers?q=\(ConsoleBrowser.encode("<script>x</script>"))")
            #expect(nothing.html.contains("&lt;script&gt;x&lt;/script&gt;"))
            #expect(!nothing.html.contains("<script"))
            let event = try await browser.get("/console/events/\(hostileEvent)")
            #expect(event.html.contains(#"<dd id="event-state">rejected</dd>"#))
            #expect(
                event.html.contains(
                    #"<pre id="raw-body">{&quot;signedPayload&quot;:&quot;&lt;script&gt;alert(&#39;b&#39;)&lt;/script&gt;&quot;}</pre>"#))
            #expect(!event.html.contains("<script"))
            let queue = try await browser.get("/console/queue")
            #expect(
                queue.html.contains(#"<tr class="problem-event" data-event-id="\#(hostileEvent)"><td><a href="/console/events/\#(hostileEvent)">"#))
            #expect(!queue.html.contains("<script"))
        }
    }

    /// A NUL character cannot be looked up (PostgreSQL text cannot hold one): the page says so with a 400, never a 500;
    /// a search longer than any key says so too.
    @Test func aNULCharacterOrAnOverlongSearchIsSaidNotFailed() async throws {
        try await withLedger { _, browser, _ in
            for path in ["/console/customers?q=%00", "/console/customers?q=a%00b", "/console/customers/a%00b"] {
                let page = try await browser.get(path)
                #expect(page.status == .badRequest, "\(path): \(page.status)")
                #expect(page.html.contains("cannot be looked up"), "\(path)")
            }
            // A search longer than any id or token says so rather than "Nothing matches".
            let long = try await browser.get("/console/customers?q=\(String(repeating: "x", count: 300))")
            #expect(long.status == .ok)
            #expect(long.html.contains(#"id="search-error""#))
            #expect(!long.html.contains(#"id="no-results""#))
        }
    }

    @Test func theQueueAndWebhooksPagesShowWhatTheContractNames() async throws {
        try await withLedger { db, browser, hostileEvent in
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.example.com/x", logger: db.logger)
            // A consumer's URL with credentials in it: no console user (this one is a viewer) reads them.
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://u:pa55word@hooks.example.com/y?token=s3cret#f", logger: db.logger)
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hooks.slack.com/services/T0AAA/B0BBB/XXXXsecret", logger: db.logger)
            // Make's and webhook.site's secret is the path's only segment.
            _ = try await WebhookEndpoints(client: db.client).add(url: "https://hook.eu1.make.com/ab12cd34secret", logger: db.logger)
            let queue = try await browser.get("/console/queue")
            #expect(queue.status == .ok)
            let html = queue.html
            for state in ["pending", "processing", "done", "rejected", "dead"] { #expect(html.contains(#"<tr data-state="\#(state)">"#), "\(state)") }
            let rejectedCount = try await db.scalar("SELECT count(*) FROM event_queue WHERE state = 'rejected'")
            #expect(html.contains(#"<tr data-state="rejected"><td>rejected</td><td class="count num">\#(rejectedCount)</td></tr>"#))
            for id in [
                #"id="oldest-pending""#, #"id="oldest-requeued""#, #"id="throughput""#, #"<table id="rejections">"#, #"<table id="problem-events">"#,
            ] {
                #expect(html.contains(id), "\(id)")
            }
            #expect(html.contains("malformed"))
            #expect(try Self.captures(#"data-event-id="([0-9]+)""#, in: html).contains(String(hostileEvent)))

            let webhooks = try await browser.get("/console/webhooks")
            #expect(webhooks.status == .ok)
            #expect(webhooks.html.contains(#"<table id="webhook-endpoints">"#))
            #expect(webhooks.html.contains("https://hooks.example.com/…"))
            #expect(webhooks.html.contains("https://hook.eu1.make.com/…"))
            #expect(!webhooks.html.contains("whsec_"))
            #expect(webhooks.html.contains("https://hooks.slack.com/…"))
            for secret in ["pa55word", "s3cret", "u:", "T0AAA", "XXXXsecret", "ab12cd34secret", "slack.com/services", "hooks.example.com/y"] {
                #expect(!webhooks.html.contains(secret), "\(secret)")
            }
            #expect(webhooks.html.contains(#"<table id="webhook-deliveries">"#))
        }
    }

    @Test func aTokenSharedByManySubscriptionsShowsEveryTimelineReadTogetherInOneStatement() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let shared = "5a0c3c1e-2b7d-4f7e-9c41-3d2f8e6b1a77"
            for (index, otid) in ["60001", "60002", "60003"].enumerated() {
                var builder = SubscriptionLifecycleBuilder(
                    originalTransactionID: OriginalTransactionID(otid),
                    start: Timestamp(millisecondsSince1970: Double(1_700_000_000_000 + index * 3_600_000)),
                    appAccountToken: AppAccountToken(shared)
                )
                builder.subscribe()
                for _ in 0..<index { builder.renew() }
                try await pipeline.append(builder.facts)
            }
            try await pipeline.drain()
            let store = CustomerLookupStore(client: db.client)
            let purchases = try await store.purchases(matching: shared, logger: db.logger).purchases
            #expect(purchases.map(\.originalTransactionID) == ["60001", "60002", "60003"])
            let timelines = try await store.timelines(of: purchases.map { ($0.environment, $0.originalTransactionID) }, logger: db.logger)
            // Each purchase gets its own entries, in signed order: the purchase, then its renewals.
            #expect(timelines.map { $0.map(\.type) } == [["SUBSCRIBED"], ["SUBSCRIBED", "DID_RENEW"], ["SUBSCRIBED", "DID_RENEW", "DID_RENEW"]])
            for timeline in timelines { #expect(timeline.map(\.signedAt) == timeline.map(\.signedAt).sorted()) }
            #expect(try await store.timelines(of: [], logger: db.logger).isEmpty)
            #expect(try await store.timelines(of: [("Sandbox", "nothing")], logger: db.logger) == [[]])
        }
    }

    @Test func aTokenSharedByMoreSubscriptionsThanAPageIsReadAPageAtATimeInPurchaseOrder() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: ConsoleTests.pki)
            let shared = "c2d7a3f0-6b1e-4e8a-9f3c-5d4b2a1e0f99"
            // 45 subscriptions whose original transaction ids do not sort like their purchase dates: the page order is
            // the purchase date's, so an order by id would fail.
            let count = 45
            for index in 0..<count {
                var builder = SubscriptionLifecycleBuilder(
                    originalTransactionID: OriginalTransactionID(String(91_000 + (index * 17) % count)),
                    start: Timestamp(millisecondsSince1970: Double(1_700_000_000_000 + index * 60_000)),
                    appAccountToken: AppAccountToken(shared)
                )
                builder.subscribe()
                try await pipeline.append(builder.facts)
            }
            // One more, bought once, on another token: never on the shared token's pages.
            var other = SubscriptionLifecycleBuilder(
                originalTransactionID: "92000", start: 1_700_000_030_000, appAccountToken: AppAccountToken(Self.otherToken)
            )
            other.subscribe()
            try await pipeline.append(other.facts)
            try await pipeline.drain()
            let inPurchaseOrder = (0..<count).map { String(91_000 + ($0 * 17) % count) }

            let store = CustomerLookupStore(client: db.client)
            var read: [String] = []
            for offset in stride(from: 0, to: 60, by: 20) {
                let page = try await store.purchases(matching: shared, limit: 20, offset: offset, logger: db.logger)
                #expect(page.total == count)
                #expect(page.purchases.count == min(20, max(0, count - offset)))
                read += page.purchases.map(\.originalTransactionID)
            }
            #expect(read == inPurchaseOrder)
            let past = try await store.purchases(matching: shared, limit: 20, offset: 100, logger: db.logger)
            #expect(past == CustomerPurchasePage(purchases: [], total: count))
            #expect(try await store.purchases(matching: "nobody", logger: db.logger) == CustomerPurchasePage(purchases: [], total: 0))

            try await Self.withConsole(db) { browser in
                let path = "/console/customers/\(shared)"
                let first = try await browser.get(path)
                #expect(first.status == .ok)
                #expect(first.html.contains("Showing 1–20 of 45"))
                #expect(try Self.captures(#"data-field="original-transaction-id">(\d+)<"#, in: first.html) == Array(inPurchaseOrder[0..<20]))
                #expect(first.html.contains(#"<a rel="next" href="\#(path)?page=2">"#))
                #expect(!first.html.contains(#"rel="prev""#))
                let last = try await browser.get("\(path)?page=3")
                #expect(last.status == .ok)
                #expect(last.html.contains("Showing 41–45 of 45"))
                #expect(try Self.captures(#"data-field="original-transaction-id">(\d+)<"#, in: last.html) == Array(inPurchaseOrder[40...]))
                #expect(last.html.contains(#"<a rel="prev" href="\#(path)?page=2">"#))
                #expect(!last.html.contains(#"rel="next""#))
                // Past the end: nothing listed, the count still said, a way back.
                let beyond = try await browser.get("\(path)?page=9")
                #expect(beyond.status == .ok)
                #expect(beyond.html.contains("Showing none (past the last page) of 45"))
                #expect(beyond.html.contains(#"<a rel="prev" href="\#(path)?page=3">"#))
                #expect(!beyond.html.contains(#"id="no-results""#))
                // A page that is not a page number is a clear 400.
                for bad in ["0", "-1", "two", ""] {
                    let response = try await browser.get("\(path)?page=\(bad)")
                    #expect(response.status == .badRequest, "\(bad)")
                    #expect(response.html.contains("page must be a whole number from 1"), "\(bad)")
                }
                // A customer with fewer than a page has no pager.
                let small = try await browser.get("/console/customers/\(Self.otherToken)")
                #expect(small.status == .ok)
                #expect(!small.html.contains("customer-pages"))
                #expect(try Self.captures(#"data-field="original-transaction-id">(\d+)<"#, in: small.html) == ["92000"])
            }
        }
    }
}
