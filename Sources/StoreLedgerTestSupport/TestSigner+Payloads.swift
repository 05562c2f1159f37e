package import Foundation

extension TestSigner {
    /// A realistic `JWSTransactionDecodedPayload` for this signer's app and environment; `overrides` wins
    /// (set a value to `NSNull()` to write `null`, or remove keys afterwards to omit them).
    package func transactionPayload(
        transactionID: String = "2000000000000001",
        originalTransactionID: String? = nil,
        productID: String = "com.example.storeledger.monthly",
        purchaseDate: Date = Date(timeIntervalSince1970: 1_735_689_600),
        expiresDate: Date? = nil,
        signedDate: Date? = nil,
        type: String = "Auto-Renewable Subscription",
        overrides: [String: Any] = [:]
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "transactionId": transactionID,
            "originalTransactionId": originalTransactionID ?? transactionID,
            "webOrderLineItemId": "2000000000000100",
            "bundleId": bundleID,
            "productId": productID,
            "purchaseDate": Self.milliseconds(purchaseDate),
            "originalPurchaseDate": Self.milliseconds(purchaseDate),
            "quantity": 1,
            "type": type,
            "inAppOwnershipType": "PURCHASED",
            "signedDate": Self.milliseconds(signedDate ?? purchaseDate),
            "environment": environment,
            "transactionReason": "PURCHASE",
            "storefront": "USA",
            "storefrontId": "143441",
            "price": 9990,
            "currency": "USD",
            "appTransactionId": "704289572311155000",
        ]
        if type == "Auto-Renewable Subscription" {
            payload["subscriptionGroupIdentifier"] = "21000001"
            payload["expiresDate"] = Self.milliseconds(expiresDate ?? purchaseDate.addingTimeInterval(30 * 86_400))
        }
        payload.merge(overrides) { _, override in override }
        return payload
    }

    /// A realistic `JWSRenewalInfoDecodedPayload` (no bundle id, like Apple's); `overrides` wins.
    package func renewalInfoPayload(
        originalTransactionID: String = "2000000000000001",
        productID: String = "com.example.storeledger.monthly",
        autoRenewStatus: Int = 1,
        renewalDate: Date = Date(timeIntervalSince1970: 1_738_281_600),
        signedDate: Date = Date(timeIntervalSince1970: 1_735_689_600),
        overrides: [String: Any] = [:]
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "originalTransactionId": originalTransactionID,
            "productId": productID,
            "autoRenewProductId": productID,
            "autoRenewStatus": autoRenewStatus,
            "isInBillingRetryPeriod": false,
            "signedDate": Self.milliseconds(signedDate),
            "environment": environment,
            "recentSubscriptionStartDate": Self.milliseconds(signedDate),
            "renewalDate": Self.milliseconds(renewalDate),
            "renewalPrice": 9990,
            "currency": "USD",
            "appTransactionId": "704289572311155000",
        ]
        payload.merge(overrides) { _, override in override }
        return payload
    }

    /// The notification envelope without its `data` / `summary` / … section: add one yourself.
    package func notificationEnvelope(
        type: String,
        subtype: String? = nil,
        notificationUUID: UUID = UUID(),
        signedDate: Date = Date(timeIntervalSince1970: 1_735_689_600)
    ) -> [String: Any] {
        var envelope: [String: Any] = [
            "notificationType": type,
            "notificationUUID": notificationUUID.uuidString.lowercased(),
            "version": "2.0",
            "signedDate": Self.milliseconds(signedDate),
        ]
        envelope["subtype"] = subtype
        return envelope
    }

    /// A notification payload with a `data` section for this signer's app, shaped as Apple sends it: `appAppleId`
    /// only in Production (Apple: it "isn't present in the sandbox environment"); nested JWS are passed already signed.
    package func notificationPayload(
        type: String,
        subtype: String? = nil,
        notificationUUID: UUID = UUID(),
        signedDate: Date = Date(timeIntervalSince1970: 1_735_689_600),
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        status: Int? = nil,
        dataOverrides: [String: Any] = [:]
    ) -> [String: Any] {
        var data: [String: Any] = [
            "bundleId": bundleID,
            "bundleVersion": "1.0",
            "environment": environment,
        ]
        if environment == "Production" { data["appAppleId"] = appAppleID }
        data["signedTransactionInfo"] = signedTransactionInfo
        data["signedRenewalInfo"] = signedRenewalInfo
        data["status"] = status
        data.merge(dataOverrides) { _, override in override }
        var payload = notificationEnvelope(
            type: type,
            subtype: subtype,
            notificationUUID: notificationUUID,
            signedDate: signedDate
        )
        payload["data"] = data
        return payload
    }

    /// Signs a notification whose nested transaction and renewal info (given as payloads) are signed too.
    ///
    /// - Parameters:
    ///   - nestedVariant: How the nested JWS are signed (e.g. `.signedWithKey(other)` for a forged transaction
    ///     inside a genuine notification).
    ///   - variant: How the notification itself is signed.
    package func signedNotification(
        type: String,
        subtype: String? = nil,
        notificationUUID: UUID = UUID(),
        signedDate: Date = Date(timeIntervalSince1970: 1_735_689_600),
        transaction: [String: Any]? = nil,
        renewalInfo: [String: Any]? = nil,
        status: Int? = nil,
        dataOverrides: [String: Any] = [:],
        nestedVariant: JWSVariant = .genuine,
        variant: JWSVariant = .genuine
    ) throws -> String {
        let payload = notificationPayload(
            type: type,
            subtype: subtype,
            notificationUUID: notificationUUID,
            signedDate: signedDate,
            signedTransactionInfo: try transaction.map { try sign(json: $0, variant: nestedVariant) },
            signedRenewalInfo: try renewalInfo.map { try sign(json: $0, variant: nestedVariant) },
            status: status,
            dataOverrides: dataOverrides
        )
        return try sign(json: payload, variant: variant)
    }

    /// Signs a transaction payload; `nil` signs `transactionPayload()` with its defaults.
    package func signedTransaction(_ payload: [String: Any]? = nil, variant: JWSVariant = .genuine) throws -> String {
        try sign(json: payload ?? transactionPayload(), variant: variant)
    }

    /// Signs a renewal info payload; `nil` signs `renewalInfoPayload()` with its defaults.
    package func signedRenewalInfo(_ payload: [String: Any]? = nil, variant: JWSVariant = .genuine) throws -> String {
        try sign(json: payload ?? renewalInfoPayload(), variant: variant)
    }
}
