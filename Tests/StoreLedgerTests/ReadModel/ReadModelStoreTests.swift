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
