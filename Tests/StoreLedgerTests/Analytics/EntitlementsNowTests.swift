import Foundation
import Logging
import PostgresNIO
import StoreLedgerCore
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// `entitlements_at(t)` and `entitlements_now` (migration 0012), the one definition of "entitled now", at instants
/// around every boundary: a period's end without EXPIRED, a grace period's end without GRACE_PERIOD_EXPIRED, a
/// revocation and its reversal, and the catalog's rules for one-time products. The ledger is built the way the
/// worker builds it, from Sandbox notifications shaped like Apple's (no appAppleId) through the real handler.
@Suite("entitlements_at / entitlements_now: entitled at an instant")
struct EntitlementsNowTests {
    static let pki = try! TestPKI()

    /// 2025-03-01T00:00:00Z: the first purchase of every scenario.
    static let start = Date(timeIntervalSince1970: 1_740_787_200)
    static let day: TimeInterval = 86_400
    /// One millisecond: Apple's resolution.
    static let tick: TimeInterval = 0.001

    /// What `entitlements_at` says about one purchase at one instant.
    struct Verdict: Equatable, CustomStringConvertible {
        var entitlement: String?
        var entitled: Bool
        var reason: String
        var status: String
        var description: String { "\(entitlement ?? "-") \(entitled ? "entitled" : "not entitled") \(reason) \(status)" }
    }

    /// Feeds Sandbox notifications through the real handler.
    struct Ledger {
        let pipeline: LedgerPipeline
        var signer: TestSigner { pipeline.signer }

        init(_ db: TestDatabase) throws {
            pipeline = try LedgerPipeline(db, pki: EntitlementsNowTests.pki, bundleID: TestSigner.defaultBundleID)
        }

        /// Appends a Sandbox notification as Apple sends it (its data carry no appAppleId) and projects it.
        func notify(
            _ type: String, _ subtype: String? = nil, at signed: Date, transaction: [String: Any]? = nil,
            renewal: [String: Any]? = nil, status: Int? = nil
        ) async throws {
            var payload = signer.notificationPayload(
                type: type, subtype: subtype, signedDate: signed,
                signedTransactionInfo: try transaction.map { try signer.sign(json: $0) },
                signedRenewalInfo: try renewal.map { try signer.sign(json: $0) }, status: status
            )
            var data = payload["data"] as? [String: Any] ?? [:]
            data.removeValue(forKey: "appAppleId")
            payload["data"] = data
            let jws = try signer.sign(json: payload)
            try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(jws)"}"#, hint: .sandbox)
            try await pipeline.drain()
        }

        /// An auto-renewable subscription's transaction.
        func subscription(
            _ id: String, product: String = "com.example.storeledger.monthly", purchased: Date, expires: Date, signed: Date,
            overrides: [String: Any] = [:]
        ) -> [String: Any] {
            signer.transactionPayload(
                transactionID: id, productID: product, purchaseDate: purchased, expiresDate: expires,
                signedDate: signed, overrides: overrides)
        }

        /// A one-time purchase's transaction (Apple sends no expiresDate for these).
        func oneTime(
            _ id: String, type: String, product: String, purchased: Date, signed: Date? = nil, overrides: [String: Any] = [:]
        ) -> [String: Any] {
            signer.transactionPayload(
                transactionID: id, productID: product, purchaseDate: purchased, signedDate: signed ?? purchased,
                type: type, overrides: overrides)
        }
    }

    /// `entitlements_at(at)` for the purchase `original`, one verdict per entitlement row.
    func verdicts(_ db: TestDatabase, _ original: String, at: Date) async throws -> [Verdict] {
        try await verdicts(db, at: at, original: original)
    }

    /// `entitlements_at(at)` for the rows of purchase `original`, or (given instead) of transaction `transactionID`.
    func verdicts(_ db: TestDatabase, at: Date, original: String? = nil, transactionID: String? = nil) async throws -> [Verdict] {
        let rows = try await db.client.query(
            """
            SELECT entitlement, entitled_now, reason, status_now FROM entitlements_at(\(at))
            WHERE (\(original)::text IS NULL OR original_transaction_id = \(original))
              AND (\(transactionID)::text IS NULL OR transaction_id = \(transactionID))
            ORDER BY entitlement NULLS FIRST
            """,
            logger: db.logger
        )
        var verdicts: [Verdict] = []
        for try await (entitlement, entitled, reason, status) in rows.decode((String?, Bool, String, String).self) {
            verdicts.append(Verdict(entitlement: entitlement, entitled: entitled, reason: reason, status: status))
        }
        return verdicts
    }

    /// The single verdict about `original` at `at`.
    func verdict(_ db: TestDatabase, _ original: String, at: Date) async throws -> Verdict? {
        let all = try await verdicts(db, original, at: at)
        #expect(all.count == 1, "\(original) at \(at): \(all)")
        return all.first
    }

    /// The premium query the README used to print, at `at` (it reads the stored columns).
    func oldReadmeQuery(_ db: TestDatabase, _ original: String, at: Date) async throws -> Bool {
        let rows = try await db.client.query(
            "SELECT entitled AND (expires_at > \(at) OR status = 'grace_period') FROM subscriptions WHERE original_transaction_id = \(original)",
            logger: db.logger
        )
        var result = false
        for try await value in rows.decode(Bool.self) { result = value }
        return result
    }

    static func active(_ reason: String = "active", status: String = "active") -> Verdict {
        Verdict(entitlement: "premium", entitled: true, reason: reason, status: status)
    }

    static func inactive(_ reason: String, status: String, entitlement: String? = "premium") -> Verdict {
        Verdict(entitlement: entitlement, entitled: false, reason: reason, status: status)
    }

    @Test func aPeriodThatEndedWithoutEXPIREDStopsEntitlingAtItsExpiry() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let expires = Self.start.addingTimeInterval(30 * Self.day)
            try await ledger.notify(
                "SUBSCRIBED", "INITIAL_BUY", at: Self.start,
                transaction: ledger.subscription("100", purchased: Self.start, expires: expires, signed: Self.start), status: 1)
            // The stored row still says what the last signed fact said.
            #expect(
                try await db.scalar("SELECT count(*) FROM subscriptions WHERE original_transaction_id = '100' AND status = 'active' AND entitled")
                    == 1)
            #expect(try await verdict(db, "100", at: Self.start) == Self.active())
            #expect(try await verdict(db, "100", at: expires.addingTimeInterval(-Self.tick)) == Self.active())
            #expect(try await verdict(db, "100", at: expires) == Self.inactive("expired", status: "expired"))
            #expect(try await verdict(db, "100", at: expires.addingTimeInterval(Self.day)) == Self.inactive("expired", status: "expired"))
        }
    }

    @Test func aGracePeriodThatEndedWithoutGRACE_PERIOD_EXPIREDStopsEntitlingAtItsEnd() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let expires = Self.start.addingTimeInterval(30 * Self.day)
            let graceEnd = expires.addingTimeInterval(16 * Self.day)
            let transaction = ledger.subscription("200", purchased: Self.start, expires: expires, signed: Self.start)
            try await ledger.notify("SUBSCRIBED", "INITIAL_BUY", at: Self.start, transaction: transaction, status: 1)
            let failed = expires.addingTimeInterval(3600)
            let renewal = ledger.signer.renewalInfoPayload(
                originalTransactionID: "200", renewalDate: expires, signedDate: failed,
                overrides: ["isInBillingRetryPeriod": true, "gracePeriodExpiresDate": TestSigner.milliseconds(graceEnd)]
            )
            try await ledger.notify("DID_FAIL_TO_RENEW", "GRACE_PERIOD", at: failed, transaction: transaction, renewal: renewal, status: 4)

            #expect(try await verdict(db, "200", at: expires.addingTimeInterval(-Self.tick)) == Self.active("grace_period", status: "grace_period"))
            #expect(try await verdict(db, "200", at: graceEnd.addingTimeInterval(-Self.tick)) == Self.active("grace_period", status: "grace_period"))
            #expect(try await verdict(db, "200", at: graceEnd) == Self.inactive("grace_period_ended", status: "billing_retry"))
            // What the README's query said: still premium after the grace period ended.
            #expect(try await oldReadmeQuery(db, "200", at: graceEnd.addingTimeInterval(Self.day)))
            #expect(try await verdict(db, "200", at: graceEnd.addingTimeInterval(Self.day))?.entitled == false)

            // GRACE_PERIOD_EXPIRED, when it comes, changes nothing about the answer after the end.
            try await ledger.notify(
                "GRACE_PERIOD_EXPIRED", at: graceEnd.addingTimeInterval(60), transaction: transaction, renewal: renewal, status: 3)
            #expect(try await verdict(db, "200", at: graceEnd) == Self.inactive("billing_retry", status: "billing_retry"))
        }
    }

    /// Apple begins charging for a renewal up to a day before the expiry: a DID_FAIL_TO_RENEW (no grace period,
    /// status 3) signed then leaves the paid period entitled until its expiry, and only then not.
    @Test func aBillingRetryBeforeThePeriodEndsKeepsThePaidPeriod() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let expires = Self.start.addingTimeInterval(30 * Self.day)
            let transaction = ledger.subscription("250", purchased: Self.start, expires: expires, signed: Self.start)
            try await ledger.notify("SUBSCRIBED", "INITIAL_BUY", at: Self.start, transaction: transaction, status: 1)
            let failed = expires.addingTimeInterval(-12 * 3600)
            let renewal = ledger.signer.renewalInfoPayload(
                originalTransactionID: "250", renewalDate: expires, signedDate: failed, overrides: ["isInBillingRetryPeriod": true])
            try await ledger.notify("DID_FAIL_TO_RENEW", at: failed, transaction: transaction, renewal: renewal, status: 3)
            #expect(try await verdict(db, "250", at: failed.addingTimeInterval(Self.tick)) == Self.active())
            #expect(try await verdict(db, "250", at: expires.addingTimeInterval(-Self.tick)) == Self.active())
            #expect(try await verdict(db, "250", at: expires) == Self.inactive("billing_retry", status: "billing_retry"))
        }
    }

    @Test func aRefundRevokesFromItsRevocationDateAndItsReversalRestores() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let expires = Self.start.addingTimeInterval(365 * Self.day)
            let revoked = Self.start.addingTimeInterval(10 * Self.day)
            let bought = ledger.subscription(
                "300", product: "com.example.storeledger.yearly", purchased: Self.start, expires: expires, signed: Self.start)
            try await ledger.notify("SUBSCRIBED", "INITIAL_BUY", at: Self.start, transaction: bought, status: 1)
            try await ledger.notify("REFUND", at: revoked, transaction: Self.revoked(bought, at: revoked, reason: 0, type: "REFUND_FULL"), status: 5)

            #expect(try await verdict(db, "300", at: revoked.addingTimeInterval(-Self.tick)) == Self.active())
            #expect(try await verdict(db, "300", at: revoked) == Self.inactive("revoked", status: "revoked"))
            #expect(try await verdict(db, "300", at: revoked.addingTimeInterval(Self.day)) == Self.inactive("revoked", status: "revoked"))

            let reversed = revoked.addingTimeInterval(2 * Self.day)
            var restored = bought
            restored["signedDate"] = TestSigner.milliseconds(reversed)
            try await ledger.notify("REFUND_REVERSED", at: reversed, transaction: restored, status: 1)
            #expect(try await verdict(db, "300", at: revoked) == Self.active())
            #expect(try await verdict(db, "300", at: reversed.addingTimeInterval(Self.tick)) == Self.active())
            #expect(try await verdict(db, "300", at: expires.addingTimeInterval(-Self.tick)) == Self.active())
            #expect(try await verdict(db, "300", at: expires) == Self.inactive("expired", status: "expired"))
        }
    }

    @Test func withoutACatalogAConsumableGrantsNothingANonConsumableGrantsForLifeANonRenewingNeedsADuration() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: Self.start,
                transaction: ledger.oneTime("400", type: "Consumable", product: "com.example.coins.100", purchased: Self.start))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: Self.start,
                transaction: ledger.oneTime("500", type: "Non-Consumable", product: "com.example.fullunlock", purchased: Self.start))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: Self.start,
                transaction: ledger.oneTime("510", type: "Non-Consumable", product: "com.example.fullunlock", purchased: Self.start))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: Self.start,
                transaction: ledger.oneTime("600", type: "Non-Renewing Subscription", product: "com.example.pass", purchased: Self.start))
            let revoked = Self.start.addingTimeInterval(5 * Self.day)
            try await ledger.notify(
                "REFUND", at: revoked,
                transaction: ledger.oneTime(
                    "510", type: "Non-Consumable", product: "com.example.fullunlock", purchased: Self.start, signed: revoked,
                    overrides: ["revocationDate": TestSigner.milliseconds(revoked), "revocationReason": 1, "revocationType": "REFUND_FULL"]
                ))

            for instant in [Self.start, Self.start.addingTimeInterval(400 * Self.day)] {
                #expect(try await verdict(db, "400", at: instant) == Self.inactive("consumable", status: "consumed", entitlement: nil))
                #expect(try await verdict(db, "500", at: instant) == Self.active("lifetime"))
                #expect(try await verdict(db, "600", at: instant) == Self.inactive("no_duration", status: "expired"))
            }
            #expect(try await verdict(db, "510", at: revoked.addingTimeInterval(-Self.tick)) == Self.active("lifetime"))
            #expect(try await verdict(db, "510", at: revoked) == Self.inactive("revoked", status: "revoked"))
        }
    }

    /// A non-consumable restored on another device is a transaction of its own (a new transaction id, the purchase's
    /// original one), posted by the app: a refund of the purchase revokes the restored copy too, from the refund's
    /// date, and its reversal restores both. Before, the copy went on granting premium after the refund.
    @Test func aRefundRevokesEveryRestoredCopyOfThePurchase() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let bought = ledger.oneTime("800", type: "Non-Consumable", product: "com.example.fullunlock", purchased: Self.start)
            try await ledger.notify("ONE_TIME_CHARGE", at: Self.start, transaction: bought)
            let restoredAt = Self.start.addingTimeInterval(30 * Self.day)
            let copy = ledger.oneTime(
                "801", type: "Non-Consumable", product: "com.example.fullunlock", purchased: Self.start, signed: restoredAt,
                overrides: ["originalTransactionId": "800"])
            try await ledger.pipeline.append(source: .client, body: #"{"signedTransaction":"\#(try ledger.signer.sign(json: copy))"}"#)
            try await ledger.pipeline.drain()
            // One purchase, two rows: both entitle.
            #expect(try await verdicts(db, "800", at: restoredAt).map(\.entitled) == [true, true])

            let revoked = Self.start.addingTimeInterval(40 * Self.day)
            try await ledger.notify("REFUND", at: revoked, transaction: Self.revoked(bought, at: revoked, reason: 1, type: "REFUND_FULL"))
            #expect(try await copyVerdict(db, "801", at: revoked.addingTimeInterval(-Self.tick)) == Self.active("lifetime"))
            #expect(try await copyVerdict(db, "801", at: revoked) == Self.inactive("revoked", status: "revoked"))
            #expect(try await verdicts(db, "800", at: revoked.addingTimeInterval(Self.day)).map(\.entitled) == [false, false])

            let reversed = revoked.addingTimeInterval(2 * Self.day)
            var restored = bought
            restored["signedDate"] = TestSigner.milliseconds(reversed)
            try await ledger.notify("REFUND_REVERSED", at: reversed, transaction: restored)
            #expect(try await verdicts(db, "800", at: reversed.addingTimeInterval(Self.tick)).map(\.entitled) == [true, true])

            // Refunded again, and the copy revoked on its own later: the copy reads revoked from the earlier date.
            let again = revoked.addingTimeInterval(20 * Self.day)
            try await ledger.notify("REFUND", at: again, transaction: Self.revoked(bought, at: again, reason: 1, type: "REFUND_FULL"))
            let later = again.addingTimeInterval(10 * Self.day)
            try await ledger.notify("REVOKE", at: later, transaction: Self.revoked(copy, at: later, reason: 0, type: "FAMILY_REVOKE"))
            #expect(try await copyVerdict(db, "801", at: again.addingTimeInterval(-Self.tick)) == Self.active("lifetime"))
            #expect(try await copyVerdict(db, "801", at: again.addingTimeInterval(Self.day)) == Self.inactive("revoked", status: "revoked"))
        }
    }

    /// A user's lookup (every "is this user premium?") reaches `subscriptions` and `purchases` by index through
    /// `entitlements_at`, whatever the function's rules: a purchase rule written as a join once made PostgreSQL scan
    /// both tables whole for every lookup (1.1 s at 200,000 rows each, against 0.6 ms).
    @Test func aUsersLookupReachesTheReadModelByIndex() async throws {
        try await TestDatabase.withFresh { db in
            let query = EntitlementStore.entitlementsQuery(of: UserID("alice"), at: Self.start)
            let plan = try await db.client.inTransaction(logger: db.logger) { connection in
                // Empty tables: without this the planner may scan them for being small, not for being unable to do better.
                try await connection.query("SELECT set_config('enable_seqscan', 'off', true)", logger: db.logger).readToEnd()
                return try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (FORMAT JSON) " + query.sql, binds: query.binds), logger: db.logger
                )
                .decode(String.self).readToEnd().joined()
            }
            var scans: [(relation: String, alias: String, indexed: Bool)] = []
            func walk(_ node: Any) {
                if let object = node as? [String: Any] {
                    if let relation = object["Relation Name"] as? String {
                        scans.append((relation, object["Alias"] as? String ?? "", object["Index Cond"] != nil))
                    }
                    object.values.forEach(walk)
                } else if let array = node as? [Any] {
                    array.forEach(walk)
                }
            }
            walk(try JSONSerialization.jsonObject(with: Data(plan.utf8)))
            // Every scan of either table, the lookup's own (its keys from the user's tokens) and the function's.
            let readModel = scans.filter { ["purchases", "subscriptions"].contains($0.relation) }
            #expect(Set(readModel.map(\.relation)) == ["purchases", "subscriptions"], "\(scans)")
            #expect(readModel.filter { !$0.indexed }.isEmpty, "\(readModel)")
        }
    }

    /// `transaction` re-signed at `date` with its revocation at that date (Apple's REFUND or REVOKE carries it so).
    static func revoked(_ transaction: [String: Any], at date: Date, reason: Int, type: String) -> [String: Any] {
        var revoked = transaction
        revoked["signedDate"] = TestSigner.milliseconds(date)
        revoked["revocationDate"] = TestSigner.milliseconds(date)
        revoked["revocationReason"] = reason
        revoked["revocationType"] = type
        return revoked
    }

    /// The verdict about the purchase row of transaction `transactionID` at `at`.
    func copyVerdict(_ db: TestDatabase, _ transactionID: String, at: Date) async throws -> Verdict? {
        let all = try await verdicts(db, at: at, transactionID: transactionID)
        #expect(all.count == 1, "\(transactionID) at \(at): \(all)")
        return all.first
    }

    @Test func theCatalogDecidesWhatAProductGrantsAndHowLongAOneTimeProductLasts() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            try await ProductCatalogStore.publish(
                ProductCatalog(products: [
                    .init(productID: "com.example.storeledger.yearly", period: SubscriptionPeriod(iso8601: "P1Y")),
                    .init(productID: "com.example.pass", period: SubscriptionPeriod(iso8601: "P1M")),
                    .init(productID: "com.example.coins.boost", entitlements: ["premium", "boost"], period: SubscriptionPeriod(iso8601: "P1D")),
                    .init(productID: "com.example.coins.100", entitlements: []),
                ]), client: db.client, logger: db.logger)
            let purchased = Date(timeIntervalSince1970: 1_738_281_600)  // 2025-01-31T00:00:00Z
            let monthLater = Date(timeIntervalSince1970: 1_740_700_800)  // 2025-02-28T00:00:00Z: P1M in UTC calendar arithmetic
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: purchased,
                transaction: ledger.oneTime("700", type: "Non-Renewing Subscription", product: "com.example.pass", purchased: purchased))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: purchased,
                transaction: ledger.oneTime("710", type: "Consumable", product: "com.example.coins.boost", purchased: purchased))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: purchased,
                transaction: ledger.oneTime("720", type: "Consumable", product: "com.example.coins.100", purchased: purchased))
            try await ledger.notify(
                "ONE_TIME_CHARGE", at: purchased,
                transaction: ledger.oneTime("730", type: "Non-Consumable", product: "com.example.unlisted", purchased: purchased))
            try await ledger.notify(
                "SUBSCRIBED", "INITIAL_BUY", at: purchased,
                transaction: ledger.subscription(
                    "740", product: "com.example.storeledger.monthly", purchased: purchased, expires: purchased.addingTimeInterval(30 * Self.day),
                    signed: purchased
                ), status: 1)

            #expect(try await verdict(db, "700", at: monthLater.addingTimeInterval(-Self.tick)) == Self.active())
            #expect(try await verdict(db, "700", at: monthLater) == Self.inactive("expired", status: "expired"))
            let boostEnd = purchased.addingTimeInterval(Self.day)
            #expect(
                try await verdicts(db, "710", at: boostEnd.addingTimeInterval(-Self.tick)) == [
                    Verdict(entitlement: "boost", entitled: true, reason: "active", status: "active"), Self.active(),
                ])
            #expect(try await verdicts(db, "710", at: boostEnd).map(\.entitled) == [false, false])
            #expect(try await verdict(db, "720", at: purchased) == Self.inactive("no_entitlements", status: "consumed", entitlement: nil))
            #expect(try await verdict(db, "730", at: purchased) == Self.inactive("not_in_catalog", status: "active", entitlement: nil))
            #expect(try await verdict(db, "740", at: purchased) == Self.inactive("not_in_catalog", status: "active", entitlement: nil))

            // Publishing the empty catalog means no catalog: the defaults by product type again.
            try await ProductCatalogStore.publish(.empty, client: db.client, logger: db.logger)
            #expect(try await verdict(db, "740", at: purchased) == Self.active())
            #expect(try await verdict(db, "720", at: purchased) == Self.inactive("consumable", status: "consumed", entitlement: nil))
            #expect(try await verdict(db, "700", at: purchased) == Self.inactive("no_duration", status: "expired"))
        }
    }

    @Test func theViewTakesNowFromTheDatabaseClockAndAnalystsReadIt() async throws {
        try await TestDatabase.withFresh { db in
            let ledger = try Ledger(db)
            let now = Date()
            // Bought a month ago; one period ends in a day, the other ended a day ago with no EXPIRED.
            for (id, expires) in [("800", now.addingTimeInterval(Self.day)), ("810", now.addingTimeInterval(-Self.day))] {
                let purchased = expires.addingTimeInterval(-30 * Self.day)
                try await ledger.notify(
                    "SUBSCRIBED", "INITIAL_BUY", at: purchased,
                    transaction: ledger.subscription(id, purchased: purchased, expires: expires, signed: purchased), status: 1)
            }
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions WHERE entitled") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM entitlements_now WHERE entitled_now AND original_transaction_id = '800'") == 1)
            #expect(
                try await db.scalar(
                    "SELECT count(*) FROM entitlements_now WHERE NOT entitled_now AND reason = 'expired' AND original_transaction_id = '810'") == 1)
            #expect(
                try await db.scalar(
                    """
                    SELECT count(*) FROM (SELECT * FROM entitlements_now EXCEPT SELECT * FROM entitlements_at(now())) differing
                    """) == 0)
            let analyst = try await db.client.inTransaction(logger: db.logger) { connection in
                try await connection.query("SET LOCAL ROLE storeledger_analyst", logger: db.logger)
                var ids: [String] = []
                let rows = try await connection.query(
                    "SELECT original_transaction_id FROM analytics.entitlements_now WHERE entitled_now ORDER BY 1", logger: db.logger
                )
                for try await id in rows.decode(String.self) { ids.append(id) }
                return ids
            }
            #expect(analyst == ["800"])
        }
    }
}
