import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Subscriptions and purchases go through one generic path (``StoredRow``): these tests hold that path to what each
/// table needs — upserts and deletes by the right key, and the stored state read back for webhooks only while an
/// endpoint is active.
@Suite("Read model store: one path for subscriptions and purchases")
struct ReadModelStoreTests {
    static func subscription(_ id: String, entitled: Bool = true) -> SubscriptionState {
        var state = SubscriptionState(environment: .sandbox, originalTransactionID: OriginalTransactionID(id), status: entitled ? .active : .expired)
        state.entitled = entitled
        state.productID = "com.example.monthly"
        state.latestTransactionID = TransactionID("\(id)-2")
        state.expiresAt = Timestamp(millisecondsSince1970: 1_800_000_000_000)
        state.lastSignedAt = Timestamp(millisecondsSince1970: 1_700_000_000_000)
        state.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        return state
    }

    static func purchase(_ id: String, original: String? = nil) -> PurchaseState {
        var state = PurchaseState(environment: .sandbox, transactionID: TransactionID(id))
        state.entitled = true
        state.productID = "com.example.level"
        state.originalTransactionID = original.map(OriginalTransactionID.init)
        return state
    }

    @Test func rowsOfBothKindsAreUpsertedAndDeletedByTheirOwnKeys() async throws {
        try await TestDatabase.withFresh { db in
            try await db.client.withConnection { connection in
                let subscriptions: [SubscriptionKey: SubscriptionState?] = Dictionary(
                    uniqueKeysWithValues: ["1", "2", "3"].map { (Self.subscription($0).key, Self.subscription($0)) })
                try await ReadModelStore.write(subscriptions, on: connection, logger: db.logger)
                let purchases: [PurchaseKey: PurchaseState?] = Dictionary(
                    uniqueKeysWithValues: ["1", "9"].map { (Self.purchase($0).key, Self.purchase($0)) })
                try await ReadModelStore.write(purchases, on: connection, logger: db.logger)
                #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 3)
                #expect(try await db.scalar("SELECT count(*) FROM purchases") == 2)

                // Nil deletes (two subscriptions at once), a changed state updates, the purchase with the same id stays.
                var changed = Self.subscription("3", entitled: false)
                changed.status = .expired
                try await ReadModelStore.write(
                    [Self.subscription("1").key: nil, Self.subscription("2").key: nil, changed.key: changed], on: connection, logger: db.logger)
                #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 1)
                #expect(try await db.scalar("SELECT count(*) FROM subscriptions WHERE original_transaction_id = '3' AND NOT entitled") == 1)
                #expect(try await db.scalar("SELECT count(*) FROM purchases") == 2)
                try await ReadModelStore.write([Self.purchase("1").key: nil] as [PurchaseKey: PurchaseState?], on: connection, logger: db.logger)
                #expect(try await db.scalar("SELECT count(*) FROM purchases WHERE transaction_id = '9'") == 1)
                #expect(try await db.scalar("SELECT count(*) FROM purchases") == 1)
                #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 1)
            }
        }
    }

    /// Advisory locks granted in this test's database (other tests' databases take theirs at the same time).
    static var advisoryLocksHere: PostgresQuery {
        """
        SELECT count(*) FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """
    }

    /// The row locks are taken (one statement, one row back) and held to the end of the transaction: another session
    /// can take none of them until it ends, and every key's lock is taken, not only the first.
    @Test func rowLocksAreHeldUntilTheTransactionEnds() async throws {
        try await TestDatabase.withFresh { db in
            let keys = (0..<300).map { "subscription/Sandbox/\($0)" }
            func othersCanTake(_ key: String) async throws -> Bool {
                try await db.scalar("SELECT count(*) FROM (SELECT pg_try_advisory_lock(hashtextextended(\(key), 0)) AS taken) t WHERE taken")
                    == 1
            }
            try await db.client.withConnection { connection in
                try await connection.query("BEGIN", logger: db.logger).readToEnd()
                try await ReadModelStore.lock(keys, on: connection, logger: db.logger)
                #expect(try await db.scalar(Self.advisoryLocksHere) == keys.count)
                for key in [keys[0], keys[150], keys[299]] { #expect(try await !othersCanTake(key), "\(key)") }
                try await connection.query("COMMIT", logger: db.logger).readToEnd()
            }
            #expect(try await db.scalar(Self.advisoryLocksHere) == 0)
        }
    }

    @Test func storedStatesAreReadBackOnlyWhileAWebhookEndpointIsActive() async throws {
        try await TestDatabase.withFresh { db in
            try await db.client.withConnection { connection in
                let subscription = Self.subscription("1")
                let purchase = Self.purchase("5", original: "4")
                try await ReadModelStore.write([subscription.key: subscription], on: connection, logger: db.logger)
                try await ReadModelStore.write([purchase.key: purchase], on: connection, logger: db.logger)
                let absent = SubscriptionKey(environment: .sandbox, originalTransactionID: "404")

                let none: [SubscriptionKey: SubscriptionState]? = try await ReadModelStore.currentIfWebhooksActive(
                    [subscription.key, absent], on: connection, logger: db.logger)
                #expect(none == nil)

                _ = try await WebhookEndpoints(client: db.client).add(url: "http://127.0.0.1:9/hook", logger: db.logger)
                let subscriptions: [SubscriptionKey: SubscriptionState]? = try await ReadModelStore.currentIfWebhooksActive(
                    [subscription.key, absent], on: connection, logger: db.logger)
                #expect(subscriptions?.count == 1)
                let read = try #require(subscriptions?[subscription.key])
                #expect(read.entitled && read.status == .active)
                #expect(read.latestTransactionID == subscription.latestTransactionID)
                #expect(read.expiresAt == subscription.expiresAt)
                #expect(read.lastSignedAt == subscription.lastSignedAt)
                #expect(read.appAccountToken == subscription.appAccountToken)
                // Nothing a subscriber cares about differs between what was written and what was read back.
                #expect(SubscriptionState.change(from: read, to: subscription) == nil)

                let purchases: [PurchaseKey: PurchaseState]? = try await ReadModelStore.currentIfWebhooksActive(
                    [purchase.key], on: connection, logger: db.logger)
                let readPurchase = try #require(purchases?[purchase.key])
                #expect(readPurchase.entitled && readPurchase.familyTransactionID == "4" && readPurchase.productID == "com.example.level")
                #expect(PurchaseState.change(from: readPurchase, to: purchase) == nil)
            }
        }
    }

    /// Every column of the row `table` holds for `id`, as PostgreSQL's text of it (timestamps in UTC).
    static func storedColumns(
        _ table: String, _ idColumn: String, _ id: String, on connection: PostgresConnection, db: TestDatabase
    ) async throws
        -> [String: String?]
    {
        try await connection.query("SET TIME ZONE 'UTC'", logger: db.logger)
        let rows = try await connection.query(
            "SELECT c.key, c.value FROM \(unescaped: table) t, jsonb_each_text(to_jsonb(t)) c WHERE t.\(unescaped: idColumn) = \(id)",
            logger: db.logger)
        var columns: [String: String?] = [:]
        for try await (key, value) in rows.decode((String, String?).self) { columns[key] = value }
        return columns
    }

    /// Whole seconds from `seconds` since 2026-01-01T00:00:00Z, and the text PostgreSQL gives the instant in UTC.
    static func instant(_ seconds: Int64) -> (Timestamp, String) {
        let date = Date(timeIntervalSince1970: Double(1_767_225_600 + seconds))
        return (Timestamp(date), Date.ISO8601FormatStyle().format(date).replacingOccurrences(of: "Z", with: "+00:00"))
    }

    @Test func everyColumnOfBothKindsHoldsItsOwnField() async throws {
        // Each field a value no other field has, so that a value written under another column's name shows.
        let times = (1...6).map { Self.instant(Int64($0) * 86_400 + Int64($0)) }
        var subscription = SubscriptionState(environment: .sandbox, originalTransactionID: "1000", status: .gracePeriod)
        subscription.bundleID = "com.example.bundle"
        subscription.productID = "com.example.product"
        subscription.subscriptionGroup = "group-21"
        subscription.entitled = true
        subscription.latestTransactionID = "1007"
        subscription.purchasedAt = times[0].0
        subscription.originalPurchasedAt = times[1].0
        subscription.expiresAt = times[2].0
        subscription.gracePeriodExpiresAt = times[3].0
        subscription.autoRenew = false
        subscription.autoRenewProductID = "com.example.next"
        subscription.expirationIntent = ExpirationIntent(rawValue: 2)
        subscription.priceIncreaseStatus = PriceIncreaseStatus(rawValue: 1)
        subscription.offerType = OfferType(rawValue: 3)
        subscription.offerID = "offer-9"
        subscription.ownership = .familyShared
        subscription.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
        subscription.revokedAt = times[4].0
        subscription.revocationReason = RevocationReason(rawValue: 1)
        subscription.revocationType = .refundProrated
        subscription.price = 4_990
        subscription.currency = "EUR"
        subscription.storefront = "FRA"
        subscription.lastSignedAt = times[5].0
        var purchase = PurchaseState(environment: .production, transactionID: "2000")
        purchase.originalTransactionID = "2001"
        purchase.bundleID = "com.example.bundle"
        purchase.productID = "com.example.coins"
        purchase.productType = .consumable
        purchase.purchasedAt = times[0].0
        purchase.expiresAt = times[1].0
        purchase.quantity = 3
        purchase.price = 1_990
        purchase.currency = "JPY"
        purchase.ownership = .purchased
        purchase.appAccountToken = "0b7e5c9e-4e0f-4bd4-9c55-3b1d1f6a2c11"
        purchase.storefront = "JPN"
        purchase.revokedAt = times[2].0
        purchase.revocationReason = RevocationReason(rawValue: 0)
        purchase.revocationType = .refundFull
        purchase.entitled = false
        purchase.lastSignedAt = times[3].0
        try await TestDatabase.withFresh { [subscription, purchase] db in
            try await db.client.withConnection { connection in
                try await ReadModelStore.write([subscription.key: subscription], on: connection, logger: db.logger)
                try await ReadModelStore.write([purchase.key: purchase], on: connection, logger: db.logger)
                let storedSubscription = try await Self.storedColumns("subscriptions", "original_transaction_id", "1000", on: connection, db: db)
                let expectedSubscription: [String: String?] = [
                    "environment": "Sandbox", "original_transaction_id": "1000", "bundle_id": "com.example.bundle",
                    "product_id": "com.example.product", "subscription_group": "group-21", "status": SubscriptionStatus.gracePeriod.rawValue,
                    "entitled": "true", "latest_transaction_id": "1007", "purchased_at": times[0].1, "original_purchased_at": times[1].1,
                    "expires_at": times[2].1, "grace_period_expires_at": times[3].1, "auto_renew": "false",
                    "auto_renew_product_id": "com.example.next", "expiration_intent": "2", "price_increase_status": "1", "offer_type": "3",
                    "offer_id": "offer-9", "ownership": "FAMILY_SHARED", "app_account_token": "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                    "revoked_at": times[4].1, "revocation_reason": "1", "revocation_type": "REFUND_PRORATED", "price": "4990",
                    "currency": "EUR", "storefront": "FRA", "last_signed_at": times[5].1,
                ]
                for column in SubscriptionRow.columns {
                    #expect(storedSubscription[column] == expectedSubscription[column], "subscriptions.\(column)")
                }
                #expect(Set(expectedSubscription.keys) == Set(SubscriptionRow.columns))
                let storedPurchase = try await Self.storedColumns("purchases", "transaction_id", "2000", on: connection, db: db)
                let expectedPurchase: [String: String?] = [
                    "environment": "Production", "transaction_id": "2000", "original_transaction_id": "2001", "bundle_id": "com.example.bundle",
                    "product_id": "com.example.coins", "product_type": "Consumable", "purchased_at": times[0].1, "expires_at": times[1].1,
                    "quantity": "3", "price": "1990", "currency": "JPY", "ownership": "PURCHASED",
                    "app_account_token": "0b7e5c9e-4e0f-4bd4-9c55-3b1d1f6a2c11", "storefront": "JPN", "revoked_at": times[2].1,
                    "revocation_reason": "0", "revocation_type": "REFUND_FULL", "entitled": "false", "last_signed_at": times[3].1,
                ]
                for column in PurchaseRow.columns {
                    #expect(storedPurchase[column] == expectedPurchase[column], "purchases.\(column)")
                }
                #expect(Set(expectedPurchase.keys) == Set(PurchaseRow.columns))
            }
        }
    }

    @Test func webhookEventsAreTypedByTheRowsKind() {
        let subscription = Self.subscription("1")
        let purchase = Self.purchase("7")
        #expect(WebhookOutbox.events(old: nil, new: subscription).map(\.type) == ["subscription.started"])
        #expect(WebhookOutbox.events(old: subscription, new: subscription).isEmpty)
        let events = WebhookOutbox.events(old: nil, new: purchase)
        #expect(events.map(\.type) == ["purchase.purchased"])
        // A purchase without an original transaction names its own id as the family's.
        #expect(events.first?.originalTransactionID == "7" && events.first?.transactionID == "7")
    }
}
