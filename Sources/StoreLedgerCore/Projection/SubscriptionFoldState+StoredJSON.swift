public import Foundation

extension SubscriptionFoldState {
    /// The state as the JSON its `Codable` conformance reads, written directly: the form `subscription_fold_states`
    /// stores, or nil when a number in it is not finite (then encode it with `JSONEncoder`, which refuses it).
    ///
    /// Every projected batch writes the states of the rows it touched; through `JSONEncoder` that was an eighth of a
    /// worker's CPU (the generic `Codable` machinery, not the JSON). The keys and shapes are those of the synthesized
    /// and hand-written `Codable` conformances (absent optionals left out, optional winner values written as `null`),
    /// and transactions are written in sorted id order, so equal states give equal text. `JSONDecoder` decodes the
    /// text back to an equal state (tested over every simulated lifecycle's states).
    public var storedJSON: String? {
        var out = JSONTextWriter(capacity: 2048)
        out.object { out in
            out.key("key")
            out.object { out in
                out.field("environment", key.environment.rawValue)
                out.field("originalTransactionID", key.originalTransactionID.rawValue)
            }
            if let current {
                out.key("current")
                out.transaction(current)
            }
            if let latestTransactionTime { out.field("latestTransactionTime", number: latestTransactionTime) }
            out.key("transactions")
            out.object { out in
                for id in transactions.keys.sorted() {
                    guard let evidence = transactions[id] else { continue }
                    out.key(string: id)
                    out.object { out in
                        if let revocation = evidence.revocation {
                            out.winner("revocation", revocation) { out, value in
                                guard let value else { return out.null() }
                                out.object { out in
                                    if let revokedAt = value.revokedAt { out.field("revokedAt", number: revokedAt.millisecondsSince1970) }
                                    if let reason = value.reason { out.field("reason", integer: Int64(reason.rawValue)) }
                                    if let type = value.type { out.field("type", type.rawValue) }
                                }
                            }
                        }
                        out.field("contested", evidence.contested)
                        if let refundWord = evidence.refundWord { out.winner("refundWord", refundWord) { $0.string($1.rawValue) } }
                    }
                }
            }
            if let activeTransaction {
                out.key("activeTransaction")
                out.stamp(activeTransaction)
            }
            if let renewalStatus {
                out.winner("renewalStatus", renewalStatus) { out, value in
                    out.object { out in
                        out.field("status", value.status.rawValue)
                        out.field("signedAt", number: value.signedAt.millisecondsSince1970)
                    }
                }
            }
            if let notificationStatus { out.winner("notificationStatus", notificationStatus) { $0.string($1.rawValue) } }
            if let autoRenew { out.winner("autoRenew", autoRenew) { out, value in value.map { out.bool($0) } ?? out.null() } }
            if let autoRenewProductID {
                out.winner("autoRenewProductID", autoRenewProductID) { out, value in value.map { out.string($0.rawValue) } ?? out.null() }
            }
            if let expirationIntent {
                out.winner("expirationIntent", expirationIntent) { out, value in value.map { out.integer(Int64($0.rawValue)) } ?? out.null() }
            }
            if let gracePeriodExpiresAt {
                out.winner("gracePeriodExpiresAt", gracePeriodExpiresAt) { out, value in
                    value.map { out.number($0.millisecondsSince1970) } ?? out.null()
                }
            }
            if let priceIncreaseStatus {
                out.winner("priceIncreaseStatus", priceIncreaseStatus) { out, value in value.map { out.integer(Int64($0.rawValue)) } ?? out.null() }
            }
            if let latestRenewalInfo {
                out.winner("latestRenewalInfo", latestRenewalInfo) { out, value in
                    out.object { out in
                        if let productID = value.productID { out.field("productID", productID.rawValue) }
                        if let token = value.appAccountToken { out.field("appAccountToken", token.rawValue) }
                    }
                }
            }
            if let notificationBundleID { out.winner("notificationBundleID", notificationBundleID) { $0.string($1.rawValue) } }
            if let latestPurchasedAppAccountToken {
                out.winner("latestPurchasedAppAccountToken", latestPurchasedAppAccountToken) { $0.string($1.rawValue) }
            }
            out.field("rulesRevision", integer: Int64(rulesRevision))
            out.field("hasNotifications", hasNotifications)
            if let lastSignedAt { out.field("lastSignedAt", number: lastSignedAt.millisecondsSince1970) }
        }
        return out.failed ? nil : out.text
    }
}

/// The fold state's own values, in the shapes `Codable` gives them.
extension JSONTextWriter {
    /// A `Winner` member: its stamp and its value, which `body` writes.
    fileprivate mutating func winner<Value>(
        _ name: StaticString, _ winner: SubscriptionFoldState.Winner<Value>, _ body: (inout JSONTextWriter, Value) -> Void
    ) {
        key(name)
        object { out in
            out.key("stamp")
            out.stamp(winner.stamp)
            out.key("value")
            body(&out, winner.value)
        }
    }

    /// A `Stamp`.
    fileprivate mutating func stamp(_ stamp: SubscriptionFoldState.Stamp) {
        object { out in
            if let time = stamp.time { out.field("time", number: time) }
            out.field("rank", integer: Int64(stamp.rank))
            if let id = stamp.id { out.field("id", id) }
        }
    }

    /// A `TransactionPayload` under Apple's keys, absent fields left out.
    fileprivate mutating func transaction(_ t: TransactionPayload) {
        object { out in
            if let v = t.originalTransactionID { out.field("originalTransactionId", v.rawValue) }
            if let v = t.transactionID { out.field("transactionId", v.rawValue) }
            if let v = t.webOrderLineItemID { out.field("webOrderLineItemId", v.rawValue) }
            if let v = t.bundleID { out.field("bundleId", v.rawValue) }
            if let v = t.productID { out.field("productId", v.rawValue) }
            if let v = t.subscriptionGroupIdentifier { out.field("subscriptionGroupIdentifier", v.rawValue) }
            if let v = t.purchaseDate { out.field("purchaseDate", number: v.millisecondsSince1970) }
            if let v = t.originalPurchaseDate { out.field("originalPurchaseDate", number: v.millisecondsSince1970) }
            if let v = t.expiresDate { out.field("expiresDate", number: v.millisecondsSince1970) }
            if let v = t.signedDate { out.field("signedDate", number: v.millisecondsSince1970) }
            if let v = t.revocationDate { out.field("revocationDate", number: v.millisecondsSince1970) }
            if let v = t.quantity { out.field("quantity", integer: Int64(v)) }
            if let v = t.type { out.field("type", v.rawValue) }
            if let v = t.appAccountToken { out.field("appAccountToken", v.rawValue) }
            if let v = t.inAppOwnershipType { out.field("inAppOwnershipType", v.rawValue) }
            if let v = t.revocationReason { out.field("revocationReason", integer: Int64(v.rawValue)) }
            if let v = t.revocationType { out.field("revocationType", v.rawValue) }
            if let v = t.revocationPercentage { out.field("revocationPercentage", integer: Int64(v)) }
            if let v = t.isUpgraded { out.field("isUpgraded", v) }
            if let v = t.offerType { out.field("offerType", integer: Int64(v.rawValue)) }
            if let v = t.offerIdentifier { out.field("offerIdentifier", v.rawValue) }
            if let v = t.offerDiscountType { out.field("offerDiscountType", v.rawValue) }
            if let v = t.offerPeriod { out.field("offerPeriod", v) }
            if let v = t.environment { out.field("environment", v.rawValue) }
            if let v = t.storefront { out.field("storefront", v) }
            if let v = t.storefrontID { out.field("storefrontId", v) }
            if let v = t.transactionReason { out.field("transactionReason", v.rawValue) }
            if let v = t.currency { out.field("currency", v) }
            if let v = t.price { out.field("price", integer: v) }
            if let v = t.appTransactionID { out.field("appTransactionId", v.rawValue) }
        }
    }
}

extension SubscriptionFoldState {
    /// Decodes a stored state's text: the same value, or the same error, as `JSONDecoder` gives; read directly when
    /// the text has the plain shape ``storedJSON`` writes (``PlainJSONReader``), through `JSONDecoder` otherwise (a
    /// text `JSONEncoder` wrote, or one this reader does not know).
    ///
    /// A worker whose cache does not hold a subscription's state reads it from the database; through `JSONDecoder`
    /// that was 4 % of a rebuild's CPU once its subscriptions outnumbered the cache (BENCHMARKS.md, ninth session).
    /// A state stored under other rules (``rulesRevision``, or none: stored before revisions) is an error too.
    public static func decode(storedJSON json: Data) throws -> SubscriptionFoldState {
        let state = try plain(storedJSON: json) ?? JSONDecoder().decode(SubscriptionFoldState.self, from: json)
        guard state.rulesRevision == currentRulesRevision else { throw OtherRulesRevision(revision: state.rulesRevision) }
        return state
    }

    /// A stored state merged under rules other than this build's.
    public struct OtherRulesRevision: Error, Sendable {
        /// The revision it was stored under.
        public let revision: Int
    }

    /// The state as read in the plain shape, or nil where ``decode(storedJSON:)`` takes `JSONDecoder` (for tests).
    package static func plain(storedJSON json: Data) -> SubscriptionFoldState? {
        try? PlainJSONReader.read(json, { reader throws(PlainJSONReader.Fallback) in try reader.foldState() })
    }
}

extension SubscriptionFoldState.Stamp {
    /// A stamp as stored: a raw instant, a raw rank and an id.
    fileprivate init(time: Double?, rawRank: Int, id: String?) {
        self.time = time
        self.rank = rawRank
        self.id = id
    }
}

/// The fold state's values read in the shapes ``SubscriptionFoldState/storedJSON`` writes them: the synthesized
/// `init(from:)`'s keys and types; a required member that is missing or `null`, a value a closed enum does not know,
/// a key twice or a number that is not a whole one gives up (``PlainJSONReader/Fallback``), leaving it to `JSONDecoder`.
extension PlainJSONReader {
    /// A `SubscriptionFoldState` object.
    fileprivate mutating func foldState() throws(Fallback) -> SubscriptionFoldState {
        var state = SubscriptionFoldState(key: SubscriptionKey(environment: .init(rawValue: ""), originalTransactionID: .init("")))
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("key") {
                try seen.insert(0)
                state.key = try reader.subscriptionKey()
            } else if name.is("current") {
                try seen.insert(1)
                state.current = try reader.readNull() ? nil : reader.transaction()
            } else if name.is("latestTransactionTime") {
                try seen.insert(2)
                state.latestTransactionTime = try reader.timestamp()?.millisecondsSince1970
            } else if name.is("transactions") {
                try seen.insert(3)
                state.transactions = try reader.transactionEvidence()
            } else if name.is("activeTransaction") {
                try seen.insert(4)
                state.activeTransaction = try reader.readNull() ? nil : reader.stamp()
            } else if name.is("renewalStatus") {
                try seen.insert(5)
                state.renewalStatus = try reader.winner { reader throws(Fallback) in try reader.renewalStatus() }
            } else if name.is("notificationStatus") {
                try seen.insert(6)
                state.notificationStatus = try reader.winner { reader throws(Fallback) in try reader.closed(SubscriptionStatus.self) }
            } else if name.is("autoRenew") {
                try seen.insert(7)
                state.autoRenew = try reader.winner { reader throws(Fallback) in try reader.bool() }
            } else if name.is("autoRenewProductID") {
                try seen.insert(8)
                state.autoRenewProductID = try reader.winner { reader throws(Fallback) in try reader.string().map(ProductID.init) }
            } else if name.is("expirationIntent") {
                try seen.insert(9)
                state.expirationIntent = try reader.winner { reader throws(Fallback) in try reader.int32().map(ExpirationIntent.init(rawValue:)) }
            } else if name.is("gracePeriodExpiresAt") {
                try seen.insert(10)
                state.gracePeriodExpiresAt = try reader.winner { reader throws(Fallback) in try reader.timestamp() }
            } else if name.is("priceIncreaseStatus") {
                try seen.insert(11)
                state.priceIncreaseStatus = try reader.winner { reader throws(Fallback) in try reader.int32().map(PriceIncreaseStatus.init(rawValue:))
                }
            } else if name.is("latestRenewalInfo") {
                try seen.insert(12)
                state.latestRenewalInfo = try reader.winner { reader throws(Fallback) in try reader.renewalInfoColumns() }
            } else if name.is("notificationBundleID") {
                try seen.insert(13)
                state.notificationBundleID = try reader.winner { reader throws(Fallback) in BundleID(try reader.requiredString()) }
            } else if name.is("latestPurchasedAppAccountToken") {
                try seen.insert(14)
                state.latestPurchasedAppAccountToken = try reader.winner { reader throws(Fallback) in AppAccountToken(try reader.requiredString()) }
            } else if name.is("rulesRevision") {
                try seen.insert(17)
                guard let revision = try reader.int32() else { throw Fallback() }
                state.rulesRevision = Int(revision)
            } else if name.is("hasNotifications") {
                try seen.insert(15)
                guard let value = try reader.bool() else { throw Fallback() }
                state.hasNotifications = value
            } else if name.is("lastSignedAt") {
                try seen.insert(16)
                state.lastSignedAt = try reader.timestamp()
            } else {
                try reader.skipValue()
            }
        }
        guard seen.contains(0), seen.contains(3), seen.contains(15), seen.contains(17) else { throw Fallback() }
        return state
    }

    /// A string that must not be `null`.
    private mutating func requiredString() throws(Fallback) -> String {
        guard let value = try string() else { throw Fallback() }
        return value
    }

    /// A value of a closed string enumeration (an unknown value is `JSONDecoder`'s error to give).
    private mutating func closed<Value: RawRepresentable<String>>(_ type: Value.Type) throws(Fallback) -> Value {
        guard let value = Value(rawValue: try requiredString()) else { throw Fallback() }
        return value
    }

    /// A `SubscriptionKey` object.
    private mutating func subscriptionKey() throws(Fallback) -> SubscriptionKey {
        var environment: String?
        var id: String?
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("environment") {
                try seen.insert(0)
                environment = try reader.requiredString()
            } else if name.is("originalTransactionID") {
                try seen.insert(1)
                id = try reader.requiredString()
            } else {
                try reader.skipValue()
            }
        }
        guard let environment, let id else { throw Fallback() }
        return SubscriptionKey(environment: AppStoreEnvironment(rawValue: environment), originalTransactionID: OriginalTransactionID(id))
    }

    /// A `Stamp` object.
    private mutating func stamp() throws(Fallback) -> SubscriptionFoldState.Stamp {
        var time: Double?
        var rank: Int?
        var id: String?
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("time") {
                try seen.insert(0)
                time = try reader.timestamp()?.millisecondsSince1970
            } else if name.is("rank") {
                try seen.insert(1)
                rank = try reader.int64().flatMap { Int(exactly: $0) }
            } else if name.is("id") {
                try seen.insert(2)
                id = try reader.string()
            } else {
                try reader.skipValue()
            }
        }
        guard let rank else { throw Fallback() }
        return SubscriptionFoldState.Stamp(time: time, rawRank: rank, id: id)
    }

    /// An optional `Winner`: `null` is nil; its stamp and its value are required (`value` reads the value, which may
    /// itself be an optional that is `null`).
    private mutating func winner<Value>(
        _ value: (inout PlainJSONReader) throws(Fallback) -> Value
    ) throws(Fallback) -> SubscriptionFoldState.Winner<Value>? {
        if try readNull() { return nil }
        var stamp: SubscriptionFoldState.Stamp?
        var read: Value?
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("stamp") {
                try seen.insert(0)
                stamp = try reader.stamp()
            } else if name.is("value") {
                try seen.insert(1)
                read = try value(&reader)
            } else {
                try reader.skipValue()
            }
        }
        guard let stamp, let read else { throw Fallback() }
        return SubscriptionFoldState.Winner(stamp: stamp, value: read)
    }

    /// The `transactions` object: revocation evidence by transaction id.
    private mutating func transactionEvidence() throws(Fallback) -> [String: SubscriptionFoldState.TransactionEvidence] {
        var evidence: [String: SubscriptionFoldState.TransactionEvidence] = [:]
        try readObject { reader, name throws(Fallback) in
            let id = String(decoding: name, as: UTF8.self)
            guard evidence[id] == nil else { throw Fallback() }
            var revocation: SubscriptionFoldState.Winner<SubscriptionFoldState.Revocation?>?
            var contested: Bool?
            var refundWord: SubscriptionFoldState.Winner<SubscriptionFoldState.RefundWord>?
            var seen = SeenKeys()
            try reader.readObject { reader, name throws(Fallback) in
                if name.is("revocation") {
                    try seen.insert(0)
                    revocation = try reader.winner { reader throws(Fallback) in try reader.readNull() ? nil : reader.revocation() }
                } else if name.is("contested") {
                    try seen.insert(1)
                    contested = try reader.bool()
                } else if name.is("refundWord") {
                    try seen.insert(2)
                    refundWord = try reader.winner { reader throws(Fallback) in try reader.closed(SubscriptionFoldState.RefundWord.self) }
                } else {
                    try reader.skipValue()
                }
            }
            guard let contested else { throw Fallback() }
            evidence[id] = SubscriptionFoldState.TransactionEvidence(revocation: revocation, contested: contested, refundWord: refundWord)
        }
        return evidence
    }

    /// A `Revocation` object.
    private mutating func revocation() throws(Fallback) -> SubscriptionFoldState.Revocation {
        var revocation = SubscriptionFoldState.Revocation()
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("revokedAt") {
                try seen.insert(0)
                revocation.revokedAt = try reader.timestamp()
            } else if name.is("reason") {
                try seen.insert(1)
                revocation.reason = try reader.int32().map(RevocationReason.init(rawValue:))
            } else if name.is("type") {
                try seen.insert(2)
                revocation.type = try reader.string().map(RevocationType.init(rawValue:))
            } else {
                try reader.skipValue()
            }
        }
        return revocation
    }

    /// A `RenewalStatus` object (both members required).
    private mutating func renewalStatus() throws(Fallback) -> SubscriptionFoldState.RenewalStatus {
        var status: SubscriptionStatus?
        var signedAt: Timestamp?
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("status") {
                try seen.insert(0)
                status = try reader.closed(SubscriptionStatus.self)
            } else if name.is("signedAt") {
                try seen.insert(1)
                signedAt = try reader.timestamp()
            } else {
                try reader.skipValue()
            }
        }
        guard let status, let signedAt else { throw Fallback() }
        return SubscriptionFoldState.RenewalStatus(status: status, signedAt: signedAt)
    }

    /// A `RenewalInfoColumns` object.
    private mutating func renewalInfoColumns() throws(Fallback) -> SubscriptionFoldState.RenewalInfoColumns {
        var columns = SubscriptionFoldState.RenewalInfoColumns()
        var seen = SeenKeys()
        try readObject { reader, name throws(Fallback) in
            if name.is("productID") {
                try seen.insert(0)
                columns.productID = try reader.string().map(ProductID.init)
            } else if name.is("appAccountToken") {
                try seen.insert(1)
                columns.appAccountToken = try reader.string().map(AppAccountToken.init)
            } else {
                try reader.skipValue()
            }
        }
        return columns
    }
}
