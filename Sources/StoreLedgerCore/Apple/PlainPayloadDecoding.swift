public import Foundation

extension TransactionPayload {
    /// Decodes a transaction's JSON: the same value, or the same error, as `JSONDecoder` gives, read directly when
    /// the JSON has Apple's plain shape (``PlainJSONReader``) and through `JSONDecoder` otherwise.
    public static func decode(json: Data) throws -> TransactionPayload {
        if let plain = plain(json: json) { return plain }
        return try JSONDecoder().decode(TransactionPayload.self, from: json)
    }

    /// The payload as read in Apple's plain shape, or nil where ``decode(json:)`` takes `JSONDecoder`.
    package static func plain(json: Data) -> TransactionPayload? {
        try? PlainJSONReader.read(json, { reader throws(PlainJSONReader.Fallback) in try reader.transaction() })
    }
}

extension RenewalInfoPayload {
    /// Decodes a renewal info's JSON: the same value, or the same error, as `JSONDecoder` gives, read directly when
    /// the JSON has Apple's plain shape (``PlainJSONReader``) and through `JSONDecoder` otherwise.
    public static func decode(json: Data) throws -> RenewalInfoPayload {
        if let plain = plain(json: json) { return plain }
        return try JSONDecoder().decode(RenewalInfoPayload.self, from: json)
    }

    /// The payload as read in Apple's plain shape, or nil where ``decode(json:)`` takes `JSONDecoder`.
    package static func plain(json: Data) -> RenewalInfoPayload? {
        try? PlainJSONReader.read(json, { reader throws(PlainJSONReader.Fallback) in try reader.renewalInfo() })
    }
}

extension NotificationPayload {
    /// Decodes a notification's JSON: the same value, or the same error, as `JSONDecoder` gives, read directly when
    /// the JSON has Apple's plain shape (``PlainJSONReader``) and through `JSONDecoder` otherwise.
    public static func decode(json: Data) throws -> NotificationPayload {
        try decodeStrippingNestedJWS(json: json).payload
    }

    /// ``decode(json:)``, and, when the JSON has Apple's plain shape, its text without the members
    /// `data.signedTransactionInfo` and `data.signedRenewalInfo` (the nested JWS texts, verified and decoded on their
    /// own): as JSON, the value of PostgreSQL's `payload::jsonb #- '{data,signedTransactionInfo}' #-
    /// '{data,signedRenewalInfo}'`, a tenth of the bytes. `withoutNestedJWS` is nil when the JSON was decoded through
    /// `JSONDecoder` (send the whole text then).
    public static func decodeStrippingNestedJWS(json: Data) throws -> (payload: NotificationPayload, withoutNestedJWS: Data?) {
        if let plain = PlainNotification(json: json) { return (plain.payload, plain.withoutNestedJWS) }
        return (try JSONDecoder().decode(NotificationPayload.self, from: json), nil)
    }

    /// The payload as read in Apple's plain shape, or nil where ``decode(json:)`` takes `JSONDecoder` (for tests).
    package static func plain(json: Data) -> NotificationPayload? {
        PlainNotification(json: json)?.payload
    }
}

extension PlainJSONReader {
    /// Where a notification's `data` object is, and the text ranges of its members other than the nested JWS.
    struct Stripped: Hashable, Sendable {
        /// The `data` object's text.
        var object: Range<Int>
        /// Its members to keep (key through value), in order.
        var kept: [Range<Int>]
        /// Bytes the nested JWS members take.
        var removedBytes: Int
    }

    /// A `TransactionPayload` object (`init(from:)`'s keys and types).
    mutating func transaction() throws(Fallback) -> TransactionPayload {
        var payload = TransactionPayload()
        var seen = SeenKeys()
        try readObject { reader, key throws(Fallback) in
            if key.is("originalTransactionId") {
                try seen.insert(0)
                payload.originalTransactionID = try reader.string().map(OriginalTransactionID.init)
            } else if key.is("transactionId") {
                try seen.insert(1)
                payload.transactionID = try reader.string().map(TransactionID.init)
            } else if key.is("webOrderLineItemId") {
                try seen.insert(2)
                payload.webOrderLineItemID = try reader.string().map(WebOrderLineItemID.init)
            } else if key.is("bundleId") {
                try seen.insert(3)
                payload.bundleID = try reader.string().map(BundleID.init)
            } else if key.is("productId") {
                try seen.insert(4)
                payload.productID = try reader.string().map(ProductID.init)
            } else if key.is("subscriptionGroupIdentifier") {
                try seen.insert(5)
                payload.subscriptionGroupIdentifier = try reader.string().map(SubscriptionGroupID.init)
            } else if key.is("purchaseDate") {
                try seen.insert(6)
                payload.purchaseDate = try reader.timestamp()
            } else if key.is("originalPurchaseDate") {
                try seen.insert(7)
                payload.originalPurchaseDate = try reader.timestamp()
            } else if key.is("expiresDate") {
                try seen.insert(8)
                payload.expiresDate = try reader.timestamp()
            } else if key.is("signedDate") {
                try seen.insert(9)
                payload.signedDate = try reader.timestamp()
            } else if key.is("revocationDate") {
                try seen.insert(10)
                payload.revocationDate = try reader.timestamp()
            } else if key.is("quantity") {
                try seen.insert(11)
                payload.quantity = try reader.int32()
            } else if key.is("type") {
                try seen.insert(12)
                payload.type = try reader.string().map(ProductType.init(rawValue:))
            } else if key.is("appAccountToken") {
                try seen.insert(13)
                payload.appAccountToken = try reader.appAccountToken()
            } else if key.is("inAppOwnershipType") {
                try seen.insert(14)
                payload.inAppOwnershipType = try reader.string().map(OwnershipType.init(rawValue:))
            } else if key.is("revocationReason") {
                try seen.insert(15)
                payload.revocationReason = try reader.int32().map(RevocationReason.init(rawValue:))
            } else if key.is("revocationType") {
                try seen.insert(16)
                payload.revocationType = try reader.string().map(RevocationType.init(rawValue:))
            } else if key.is("revocationPercentage") {
                try seen.insert(17)
                payload.revocationPercentage = try reader.int32()
            } else if key.is("isUpgraded") {
                try seen.insert(18)
                payload.isUpgraded = try reader.bool()
            } else if key.is("offerType") {
                try seen.insert(19)
                payload.offerType = try reader.int32().map(OfferType.init(rawValue:))
            } else if key.is("offerIdentifier") {
                try seen.insert(20)
                payload.offerIdentifier = try reader.string().map(OfferID.init)
            } else if key.is("offerDiscountType") {
                try seen.insert(21)
                payload.offerDiscountType = try reader.string().map(OfferDiscountType.init(rawValue:))
            } else if key.is("offerPeriod") {
                try seen.insert(22)
                payload.offerPeriod = try reader.string()
            } else if key.is("environment") {
                try seen.insert(23)
                payload.environment = try reader.string().map(AppStoreEnvironment.init(rawValue:))
            } else if key.is("storefront") {
                try seen.insert(24)
                payload.storefront = try reader.string()
            } else if key.is("storefrontId") {
                try seen.insert(25)
                payload.storefrontID = try reader.string()
            } else if key.is("transactionReason") {
                try seen.insert(26)
                payload.transactionReason = try reader.string().map(TransactionReason.init(rawValue:))
            } else if key.is("currency") {
                try seen.insert(27)
                payload.currency = try reader.string()
            } else if key.is("price") {
                try seen.insert(28)
                payload.price = try reader.int64()
            } else if key.is("appTransactionId") {
                try seen.insert(29)
                payload.appTransactionID = try reader.string().map(AppTransactionID.init)
            } else {
                try reader.skipValue()
            }
        }
        return payload
    }

    /// A `RenewalInfoPayload` object (`init(from:)`'s keys and types).
    mutating func renewalInfo() throws(Fallback) -> RenewalInfoPayload {
        var payload = RenewalInfoPayload()
        var seen = SeenKeys()
        try readObject { reader, key throws(Fallback) in
            if key.is("originalTransactionId") {
                try seen.insert(0)
                payload.originalTransactionID = try reader.string().map(OriginalTransactionID.init)
            } else if key.is("productId") {
                try seen.insert(1)
                payload.productID = try reader.string().map(ProductID.init)
            } else if key.is("autoRenewProductId") {
                try seen.insert(2)
                payload.autoRenewProductID = try reader.string().map(ProductID.init)
            } else if key.is("autoRenewStatus") {
                try seen.insert(3)
                payload.autoRenewStatus = try reader.int32().map(AutoRenewStatus.init(rawValue:))
            } else if key.is("expirationIntent") {
                try seen.insert(4)
                payload.expirationIntent = try reader.int32().map(ExpirationIntent.init(rawValue:))
            } else if key.is("isInBillingRetryPeriod") {
                try seen.insert(5)
                payload.isInBillingRetryPeriod = try reader.bool()
            } else if key.is("gracePeriodExpiresDate") {
                try seen.insert(6)
                payload.gracePeriodExpiresDate = try reader.timestamp()
            } else if key.is("priceIncreaseStatus") {
                try seen.insert(7)
                payload.priceIncreaseStatus = try reader.int32().map(PriceIncreaseStatus.init(rawValue:))
            } else if key.is("offerType") {
                try seen.insert(8)
                payload.offerType = try reader.int32().map(OfferType.init(rawValue:))
            } else if key.is("offerIdentifier") {
                try seen.insert(9)
                payload.offerIdentifier = try reader.string().map(OfferID.init)
            } else if key.is("offerDiscountType") {
                try seen.insert(10)
                payload.offerDiscountType = try reader.string().map(OfferDiscountType.init(rawValue:))
            } else if key.is("offerPeriod") {
                try seen.insert(11)
                payload.offerPeriod = try reader.string()
            } else if key.is("signedDate") {
                try seen.insert(12)
                payload.signedDate = try reader.timestamp()
            } else if key.is("recentSubscriptionStartDate") {
                try seen.insert(13)
                payload.recentSubscriptionStartDate = try reader.timestamp()
            } else if key.is("renewalDate") {
                try seen.insert(14)
                payload.renewalDate = try reader.timestamp()
            } else if key.is("renewalPrice") {
                try seen.insert(15)
                payload.renewalPrice = try reader.int64()
            } else if key.is("currency") {
                try seen.insert(16)
                payload.currency = try reader.string()
            } else if key.is("environment") {
                try seen.insert(17)
                payload.environment = try reader.string().map(AppStoreEnvironment.init(rawValue:))
            } else if key.is("eligibleWinBackOfferIds") {
                try seen.insert(18)
                payload.eligibleWinBackOfferIDs = try reader.strings().map { $0.map(OfferID.init) }
            } else if key.is("appAccountToken") {
                try seen.insert(19)
                payload.appAccountToken = try reader.appAccountToken()
            } else if key.is("appTransactionId") {
                try seen.insert(20)
                payload.appTransactionID = try reader.string().map(AppTransactionID.init)
            } else {
                try reader.skipValue()
            }
        }
        return payload
    }

    /// A `NotificationPayload` object (its synthesized `Codable` keys and types) without `summary`,
    /// `externalPurchaseToken` or `appData` (rare: those take `JSONDecoder`), and where its `data` members are.
    mutating func notification() throws(Fallback) -> (payload: NotificationPayload, stripped: Stripped?) {
        var payload = NotificationPayload()
        var stripped: Stripped?
        var seen = SeenKeys()
        try readObject { reader, key throws(Fallback) in
            if key.is("notificationType") {
                try seen.insert(0)
                payload.notificationType = try reader.string().map(NotificationType.init(rawValue:))
            } else if key.is("subtype") {
                try seen.insert(1)
                payload.subtype = try reader.string().map(NotificationSubtype.init(rawValue:))
            } else if key.is("notificationUUID") {
                try seen.insert(2)
                payload.notificationUUID = try reader.string().map(NotificationUUID.init)
            } else if key.is("version") {
                try seen.insert(3)
                payload.version = try reader.string()
            } else if key.is("signedDate") {
                try seen.insert(4)
                payload.signedDate = try reader.timestamp()
            } else if key.is("data") {
                try seen.insert(5)
                if try !reader.readNull() {
                    let (data, members) = try reader.notificationData()
                    payload.data = data
                    stripped = members
                }
            } else if key.is("summary") || key.is("externalPurchaseToken") || key.is("appData") {
                guard try reader.readNull() else { throw Fallback() }
            } else {
                try reader.skipValue()
            }
        }
        return (payload, stripped)
    }

    /// A `NotificationData` object and the ranges of its members other than the nested JWS.
    private mutating func notificationData() throws(Fallback) -> (NotificationData, Stripped) {
        var data = NotificationData()
        var kept: [Range<Int>] = []
        var removed = 0
        var seen = SeenKeys()
        let object = try readObject { reader, key throws(Fallback) in
            // The key's opening quote: the reader is at the value, after the key, the colon and whitespace.
            let memberStart = key.baseAddress! - reader.bytes.baseAddress! - 1
            var nested = false
            if key.is("environment") {
                try seen.insert(0)
                data.environment = try reader.string().map(AppStoreEnvironment.init(rawValue:))
            } else if key.is("appAppleId") {
                try seen.insert(1)
                data.appAppleID = try reader.int64()
            } else if key.is("bundleId") {
                try seen.insert(2)
                data.bundleID = try reader.string().map(BundleID.init)
            } else if key.is("bundleVersion") {
                try seen.insert(3)
                data.bundleVersion = try reader.string()
            } else if key.is("signedTransactionInfo") {
                try seen.insert(4)
                data.signedTransactionInfo = try reader.string()
                nested = true
            } else if key.is("signedRenewalInfo") {
                try seen.insert(5)
                data.signedRenewalInfo = try reader.string()
                nested = true
            } else if key.is("status") {
                try seen.insert(6)
                data.status = try reader.int32().map(SubscriptionStatusCode.init(rawValue:))
            } else if key.is("consumptionRequestReason") {
                try seen.insert(7)
                data.consumptionRequestReason = try reader.string().map(ConsumptionRequestReason.init(rawValue:))
            } else {
                try reader.skipValue()
            }
            if nested {
                removed += reader.index - memberStart
            } else {
                kept.append(memberStart..<reader.index)
            }
        }
        return (data, Stripped(object: object, kept: kept, removedBytes: removed))
    }

    /// `decodeAppAccountTokenIfPresent`: a string, trimmed of `.whitespaces` (for ASCII, which a plain string is: spaces
    /// and tabs); empty reads as none.
    mutating func appAccountToken() throws(Fallback) -> AppAccountToken? {
        if try readNull() { return nil }
        var text = try stringBytes()[...]
        while let first = text.first, first == 0x20 || first == 0x09 { text = text.dropFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text = text.dropLast() }
        return text.isEmpty ? nil : AppAccountToken(String(decoding: UnsafeBufferPointer(rebasing: text), as: UTF8.self))
    }
}
