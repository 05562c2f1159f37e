import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport

/// A small App Store business of 25 subscriptions, January to June 2025 (plus two trials running now), written as
/// the signed notifications (and one app-posted transaction) Apple's side would produce, in signed order. The
/// figures it must give are worked out by hand in `SyntheticBusinessTests`; the story of each subscription is there.
///
/// Production data for `com.example.app` (appAppleId 1234), all prices in USD: monthly 9.99, pro monthly 14.99,
/// yearly 59.99, weekly 2.99 — one subscription group.
struct SyntheticBusiness {
    /// The products.
    static let monthly = "com.example.monthly", pro = "com.example.pro.monthly", yearly = "com.example.yearly",
        weekly = "com.example.weekly"
    /// Price per product, in Apple's milliunits.
    static let prices = [monthly: 9990, pro: 14990, yearly: 59990, weekly: 2990]

    /// One signed input with the instant Apple signed it.
    struct Input: Sendable {
        /// When it was signed (inputs are appended in this order).
        var signedAt: Date
        /// How it arrives.
        var source: EventSource
        /// The HTTP body.
        var body: String
    }

    /// The signer: Production, the pipeline's app.
    let signer: TestSigner
    /// The inputs built so far.
    private(set) var inputs: [Input] = []
    /// The latest transaction payload of each subscription (by original transaction id).
    private var last: [String: [String: Any]] = [:]
    /// The start of each subscription's first period.
    private var originalPurchase: [String: Date] = [:]
    /// How many transactions each subscription has.
    private var count: [String: Int] = [:]

    /// A business signed by `pki`'s leaf, as Production data of `com.example.app`.
    init(pki: TestPKI) {
        signer = TestSigner(pki: pki, bundleID: "com.example.app", appAppleID: 1_234, environment: "Production")
    }

    /// `yyyy-MM-dd` (midnight UTC).
    static func day(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: text)!
    }

    /// Subscription number `n`'s original transaction id (S01 = "100100").
    static func otid(_ n: Int) -> String { String(100_000 + n * 100) }

    // MARK: - Signed facts

    private mutating func transaction(
        _ n: Int, product: String, start: Date, end: Date, trial: String? = nil, reason: String, extra: [String: Any] = [:]
    ) -> [String: Any] {
        let otid = Self.otid(n)
        count[otid, default: 0] += 1
        if originalPurchase[otid] == nil { originalPurchase[otid] = start }
        let tid = String(Int(otid)! + count[otid]!)
        var overrides: [String: Any] = [
            "originalPurchaseDate": TestSigner.milliseconds(originalPurchase[otid]!),
            "webOrderLineItemId": tid + "9",
            "transactionReason": reason,
            "price": trial == nil ? Self.prices[product]! : 0,
        ]
        if let trial {
            overrides["offerType"] = 1
            overrides["offerDiscountType"] = "FREE_TRIAL"
            overrides["offerPeriod"] = trial
        }
        overrides.merge(extra) { _, new in new }
        let payload = signer.transactionPayload(
            transactionID: tid, originalTransactionID: otid, productID: product, purchaseDate: start, expiresDate: end,
            signedDate: start, overrides: overrides
        )
        last[otid] = payload
        return payload
    }

    private func renewal(
        _ n: Int, product: String, at: Date, autoRenew: Bool = true, billingRetry: Bool = false, grace: Date? = nil,
        expirationIntent: Int? = nil
    ) -> [String: Any] {
        var overrides: [String: Any] = ["isInBillingRetryPeriod": billingRetry, "renewalPrice": Self.prices[product]!]
        if let grace { overrides["gracePeriodExpiresDate"] = TestSigner.milliseconds(grace) }
        if let expirationIntent { overrides["expirationIntent"] = expirationIntent }
        return signer.renewalInfoPayload(
            originalTransactionID: Self.otid(n), productID: product, autoRenewStatus: autoRenew ? 1 : 0,
            renewalDate: at, signedDate: at, overrides: overrides
        )
    }

    private mutating func notify(
        _ type: String, _ subtype: String? = nil, at: Date, transaction: [String: Any]?, renewal: [String: Any]?, status: Int?
    ) throws {
        let signed = try signer.signedNotification(
            type: type, subtype: subtype, signedDate: at, transaction: transaction, renewalInfo: renewal, status: status
        )
        let body = String(
            decoding: try JSONSerialization.data(withJSONObject: ["signedPayload": signed], options: [.sortedKeys]), as: UTF8.self
        )
        inputs.append(Input(signedAt: at, source: .appleNotification, body: body))
    }

    // MARK: - What happens to a subscription

    /// SUBSCRIBED (INITIAL_BUY, or RESUBSCRIBE after an expiry): a first period, or a trial (`trial` = offerPeriod).
    mutating func subscribe(_ n: Int, _ product: String, _ start: String, _ end: String, trial: String? = nil, resubscribe: Bool = false) throws {
        let tx = transaction(n, product: product, start: Self.day(start), end: Self.day(end), trial: trial, reason: "PURCHASE")
        try notify(
            "SUBSCRIBED", resubscribe ? "RESUBSCRIBE" : "INITIAL_BUY", at: Self.day(start), transaction: tx,
            renewal: renewal(n, product: product, at: Self.day(start)), status: 1)
    }

    /// DID_RENEW (BILLING_RECOVERY when it ends a billing retry or grace period): the next period.
    mutating func renew(_ n: Int, _ product: String, _ start: String, _ end: String, recovery: Bool = false) throws {
        let tx = transaction(n, product: product, start: Self.day(start), end: Self.day(end), reason: "RENEWAL")
        try notify(
            "DID_RENEW", recovery ? "BILLING_RECOVERY" : nil, at: Self.day(start), transaction: tx,
            renewal: renewal(n, product: product, at: Self.day(start)), status: 1)
    }

    /// Renews `product` every `months` months (or 7 days when `weekly`) from `from` while the period starts before `until`.
    mutating func renewals(_ n: Int, _ product: String, from: String, until: String, weekly: Bool = false) throws {
        var start = Self.day(from)
        let stop = Self.day(until)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        while start < stop {
            let end = weekly ? start.addingTimeInterval(7 * 86_400) : calendar.date(byAdding: .month, value: 1, to: start)!
            let tx = transaction(n, product: product, start: start, end: end, reason: "RENEWAL")
            try notify("DID_RENEW", at: start, transaction: tx, renewal: renewal(n, product: product, at: start), status: 1)
            start = end
        }
    }

    /// DID_CHANGE_RENEWAL_STATUS / AUTO_RENEW_DISABLED.
    mutating func turnAutoRenewOff(_ n: Int, _ product: String, at: String) throws {
        try notify(
            "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: Self.day(at), transaction: last[Self.otid(n)],
            renewal: renewal(n, product: product, at: Self.day(at), autoRenew: false), status: 1)
    }

    /// EXPIRED: VOLUNTARY (auto-renew was off) or BILLING_RETRY (the retry period ended).
    mutating func expire(_ n: Int, _ product: String, at: String, voluntary: Bool = true) throws {
        try notify(
            "EXPIRED", voluntary ? "VOLUNTARY" : "BILLING_RETRY", at: Self.day(at), transaction: last[Self.otid(n)],
            renewal: renewal(n, product: product, at: Self.day(at), autoRenew: false, expirationIntent: voluntary ? 1 : 2),
            status: 2)
    }

    /// DID_FAIL_TO_RENEW at the latest period's expiry: GRACE_PERIOD with its end, or plain billing retry.
    mutating func failToRenew(_ n: Int, _ product: String, at: String, graceUntil: String? = nil) throws {
        let grace = graceUntil.map(Self.day)
        try notify(
            "DID_FAIL_TO_RENEW", grace == nil ? nil : "GRACE_PERIOD", at: Self.day(at), transaction: last[Self.otid(n)],
            renewal: renewal(n, product: product, at: Self.day(at), billingRetry: true, grace: grace), status: grace == nil ? 3 : 4)
    }

    /// GRACE_PERIOD_EXPIRED: the grace period ended without a recovery (billing retry goes on).
    mutating func graceExpired(_ n: Int, _ product: String, at: String, graceUntil: String) throws {
        try notify(
            "GRACE_PERIOD_EXPIRED", at: Self.day(at), transaction: last[Self.otid(n)],
            renewal: renewal(n, product: product, at: Self.day(at), billingRetry: true, grace: Self.day(graceUntil)), status: 3)
    }

    /// REFUND of the transaction `tx`: Apple re-signs it with its revocation.
    mutating func refund(_ tx: [String: Any], at: String, status: Int) throws {
        var revoked = tx
        revoked["revocationDate"] = TestSigner.milliseconds(Self.day(at))
        revoked["revocationReason"] = 0
        revoked["revocationType"] = "REFUND_FULL"
        revoked["signedDate"] = TestSigner.milliseconds(Self.day(at))
        try notify("REFUND", at: Self.day(at), transaction: revoked, renewal: nil, status: status)
    }

    /// An immediate upgrade to `product`: DID_CHANGE_RENEWAL_PREF / UPGRADE with the new period, and the replaced
    /// transaction re-signed with `isUpgraded` (as the app reads it from its transaction history and posts it).
    mutating func upgrade(_ n: Int, to product: String, _ start: String, _ end: String) throws {
        var replaced = last[Self.otid(n)]!
        replaced["isUpgraded"] = true
        replaced["signedDate"] = TestSigner.milliseconds(Self.day(start))
        let tx = transaction(n, product: product, start: Self.day(start), end: Self.day(end), reason: "PURCHASE")
        try notify(
            "DID_CHANGE_RENEWAL_PREF", "UPGRADE", at: Self.day(start), transaction: tx,
            renewal: renewal(n, product: product, at: Self.day(start)), status: 1)
        let body = String(
            decoding: try JSONSerialization.data(withJSONObject: ["signedTransaction": try signer.sign(json: replaced)], options: [.sortedKeys]),
            as: UTF8.self
        )
        inputs.append(Input(signedAt: Self.day(start), source: .client, body: body))
    }

    /// The latest transaction payload of subscription `n`.
    func latest(_ n: Int) -> [String: Any] { last[Self.otid(n)]! }

    /// A free trial of the monthly product running now (started two days ago, ends in five), auto-renew on or off.
    mutating func trialRunningNow(_ n: Int, autoRenew: Bool, now: Date) throws {
        let start = Date(timeIntervalSince1970: (now.timeIntervalSince1970 / 1_000).rounded(.down) * 1_000 - 2 * 86_400)
        let tx = transaction(n, product: Self.monthly, start: start, end: start.addingTimeInterval(7 * 86_400), trial: "P1W", reason: "PURCHASE")
        try notify("SUBSCRIBED", "INITIAL_BUY", at: start, transaction: tx, renewal: renewal(n, product: Self.monthly, at: start), status: 1)
        if !autoRenew {
            let off = start.addingTimeInterval(86_400)
            try notify(
                "DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", at: off, transaction: tx,
                renewal: renewal(n, product: Self.monthly, at: off, autoRenew: false), status: 1)
        }
    }

    // MARK: - The business

    /// Every subscription's story (see `SyntheticBusinessTests` for the figures it gives).
    static func build(pki: TestPKI, now: Date = Date()) throws -> SyntheticBusiness {
        var b = SyntheticBusiness(pki: pki)
        // S01 monthly, Jan 10, renews through Jul 10.
        try b.subscribe(1, monthly, "2025-01-10", "2025-02-10")
        try b.renewals(1, monthly, from: "2025-02-10", until: "2025-07-01")
        // S02 monthly, Jan 20; auto-renew off Mar 1; expires Mar 20.
        try b.subscribe(2, monthly, "2025-01-20", "2025-02-20")
        try b.renewals(2, monthly, from: "2025-02-20", until: "2025-03-01")
        try b.turnAutoRenewOff(2, monthly, at: "2025-03-01")
        try b.expire(2, monthly, at: "2025-03-20")
        // S03 yearly, Jan 5 2025 - Jan 5 2026.
        try b.subscribe(3, yearly, "2025-01-05", "2026-01-05")
        // S04 yearly, Feb 15 2025 - Feb 15 2026.
        try b.subscribe(4, yearly, "2025-02-15", "2026-02-15")
        // S05 weekly, Mar 3 - Apr 7; auto-renew off Apr 2.
        try b.subscribe(5, weekly, "2025-03-03", "2025-03-10")
        try b.renewals(5, weekly, from: "2025-03-10", until: "2025-04-01", weekly: true)
        try b.turnAutoRenewOff(5, weekly, at: "2025-04-02")
        try b.expire(5, weekly, at: "2025-04-07")
        // S06 weekly, May 26, renews through Jul 7.
        try b.subscribe(6, weekly, "2025-05-26", "2025-06-02")
        try b.renewals(6, weekly, from: "2025-06-02", until: "2025-07-01", weekly: true)
        // S07 monthly: trial Feb 3-10, converts Feb 10, renews through Jul 10.
        try b.subscribe(7, monthly, "2025-02-03", "2025-02-10", trial: "P1W")
        try b.renewals(7, monthly, from: "2025-02-10", until: "2025-07-01")
        // S08 monthly: trial Mar 5-12, auto-renew off Mar 7 (abandoned), expires Mar 12.
        try b.subscribe(8, monthly, "2025-03-05", "2025-03-12", trial: "P1W")
        try b.turnAutoRenewOff(8, monthly, at: "2025-03-07")
        try b.expire(8, monthly, at: "2025-03-12")
        // S09 monthly: trial Apr 2-9, first payment Apr 9 refunded Apr 12.
        try b.subscribe(9, monthly, "2025-04-02", "2025-04-09", trial: "P1W")
        try b.renew(9, monthly, "2025-04-09", "2025-05-09")
        try b.refund(b.latest(9), at: "2025-04-12", status: 5)
        // S10 monthly, Apr 6; expires May 6 (voluntary); resubscribes May 20, renews Jun 20.
        try b.subscribe(10, monthly, "2025-04-06", "2025-05-06")
        try b.turnAutoRenewOff(10, monthly, at: "2025-04-20")
        try b.expire(10, monthly, at: "2025-05-06")
        try b.subscribe(10, monthly, "2025-05-20", "2025-06-20", resubscribe: true)
        try b.renewals(10, monthly, from: "2025-06-20", until: "2025-07-01")
        // S11 monthly, Jan 10; billing fails Mar 10 into a 28-day grace period (until Apr 7); recovered Mar 28:
        // Apple keeps the renewal date, so the recovered period is Mar 28 - Apr 10 (13 days); renews through Jul 10.
        try b.subscribe(11, monthly, "2025-01-10", "2025-02-10")
        try b.renewals(11, monthly, from: "2025-02-10", until: "2025-03-01")
        try b.failToRenew(11, monthly, at: "2025-03-10", graceUntil: "2025-04-07")
        try b.renew(11, monthly, "2025-03-28", "2025-04-10", recovery: true)
        try b.renewals(11, monthly, from: "2025-04-10", until: "2025-07-01")
        // S12 monthly, Jan 25; auto-renew off, expires Mar 25 (voluntary); resubscribes Apr 8 to the weekly, whose
        // renewal fails Apr 15 into a 6-day grace period (until Apr 21) that ends without recovery.
        try b.subscribe(12, monthly, "2025-01-25", "2025-02-25")
        try b.renewals(12, monthly, from: "2025-02-25", until: "2025-03-01")
        try b.turnAutoRenewOff(12, monthly, at: "2025-03-02")
        try b.expire(12, monthly, at: "2025-03-25")
        try b.subscribe(12, weekly, "2025-04-08", "2025-04-15", resubscribe: true)
        try b.failToRenew(12, weekly, at: "2025-04-15", graceUntil: "2025-04-21")
        try b.graceExpired(12, weekly, at: "2025-04-21", graceUntil: "2025-04-21")
        // S13 monthly, Jan 8 - Apr 8 (auto-renew off Mar 20); its Feb 8 payment is refunded late, on May 20.
        try b.subscribe(13, monthly, "2025-01-08", "2025-02-08")
        try b.renew(13, monthly, "2025-02-08", "2025-03-08")
        let february13 = b.latest(13)
        try b.renew(13, monthly, "2025-03-08", "2025-04-08")
        try b.turnAutoRenewOff(13, monthly, at: "2025-03-20")
        try b.expire(13, monthly, at: "2025-04-08")
        try b.refund(february13, at: "2025-05-20", status: 2)
        // S14 monthly, Feb 12; renews Mar 12; upgrades to pro Mar 20; pro renews through Jul 20.
        try b.subscribe(14, monthly, "2025-02-12", "2025-03-12")
        try b.renew(14, monthly, "2025-03-12", "2025-04-12")
        try b.upgrade(14, to: pro, "2025-03-20", "2025-04-20")
        try b.renewals(14, pro, from: "2025-04-20", until: "2025-07-01")
        // S15 monthly, Mar 3, renews through Jul 3.
        try b.subscribe(15, monthly, "2025-03-03", "2025-04-03")
        try b.renewals(15, monthly, from: "2025-04-03", until: "2025-07-01")
        // S16 monthly, Apr 14 - Jun 14 (auto-renew off May 30).
        try b.subscribe(16, monthly, "2025-04-14", "2025-05-14")
        try b.renew(16, monthly, "2025-05-14", "2025-06-14")
        try b.turnAutoRenewOff(16, monthly, at: "2025-05-30")
        try b.expire(16, monthly, at: "2025-06-14")
        // S17 yearly, Apr 22 2025 - Apr 22 2026.
        try b.subscribe(17, yearly, "2025-04-22", "2026-04-22")
        // S18 monthly: trial May 6-13, converts May 13, renews through Jul 13.
        try b.subscribe(18, monthly, "2025-05-06", "2025-05-13", trial: "P1W")
        try b.renewals(18, monthly, from: "2025-05-13", until: "2025-07-01")
        // S19 monthly: trial Jun 2-9, auto-renew off Jun 4 (abandoned), expires Jun 9.
        try b.subscribe(19, monthly, "2025-06-02", "2025-06-09", trial: "P1W")
        try b.turnAutoRenewOff(19, monthly, at: "2025-06-04")
        try b.expire(19, monthly, at: "2025-06-09")
        // S20 weekly: trial Jun 16-19 (3 days), converts Jun 19, renews Jun 26 (to Jul 3).
        try b.subscribe(20, weekly, "2025-06-16", "2025-06-19", trial: "P3D")
        try b.renewals(20, weekly, from: "2025-06-19", until: "2025-07-01", weekly: true)
        // S21 yearly, Jan 28; refunded Feb 3.
        try b.subscribe(21, yearly, "2025-01-28", "2026-01-28")
        try b.refund(b.latest(21), at: "2025-02-03", status: 5)
        // S22 monthly, Jan 3 - May 3; billing fails May 3 with no grace period; expires from billing retry Jul 2.
        try b.subscribe(22, monthly, "2025-01-03", "2025-02-03")
        try b.renewals(22, monthly, from: "2025-02-03", until: "2025-04-04")
        try b.failToRenew(22, monthly, at: "2025-05-03")
        try b.expire(22, monthly, at: "2025-07-02", voluntary: false)
        // S23 monthly, Jun 5 - Jul 5.
        try b.subscribe(23, monthly, "2025-06-05", "2025-07-05")
        // S24 and S25: monthly trials running now; S25's auto-renew is off.
        try b.trialRunningNow(24, autoRenew: true, now: now)
        try b.trialRunningNow(25, autoRenew: false, now: now)
        return b
    }
}
