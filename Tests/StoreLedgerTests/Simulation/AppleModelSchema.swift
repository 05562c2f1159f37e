import Foundation

/// Apple's published models as field → JSON type tables, to hold the simulator's output against.
///
/// Derived (read, not copied) from Apple's app-store-server-library-swift, `Sources/AppStoreServerLibrary/Models/`:
/// `ResponseBodyV2DecodedPayload`, `Data`, `JWSTransactionDecodedPayload`, `JWSRenewalInfoDecodedPayload` and the
/// enums they decode (`NotificationTypeV2`, `Subtype`, `Status`, `ConsumptionRequestReason`, `ProductType`,
/// `InAppOwnershipType`, `RevocationReason`, `RevocationType`, `OfferType`, `OfferDiscountType`,
/// `TransactionReason`, `AutoRenewStatus`, `ExpirationIntent`, `PriceIncreaseStatus`, `AppStoreEnvironment`);
/// dates there are `Date`s decoded from epoch milliseconds, ids are `String`s, `price` and `renewalPrice` `Int64`
/// milliunits, `appAppleId` `Int64`, `quantity` `Int32`, `appAccountToken` a `UUID`. Fields Apple added since
/// (`appTransactionId`, `offerPeriod`, `revocationType`, `revocationPercentage`, `advancedCommerceInfo`,
/// `billingPlanType`, `commitmentInfo`, …) are taken from Apple's decoded samples in `StoreLedgerCoreTestSupport/AppleSamples/models`, and
/// notification types newer than the library's enum from Apple's notificationType documentation.
enum AppleModelSchema {
    /// The JSON type Apple's model gives a field.
    enum FieldType: CustomStringConvertible {
        /// A JSON string.
        case string
        /// A string holding a UUID.
        case uuid
        /// A string holding a decimal number (Apple's ids: `originalTransactionId`, `webOrderLineItemId`, …).
        case numericString
        /// A string, one of these values.
        case stringEnum(Set<String>)
        /// A JSON integer, one of these values.
        case integerEnum(Set<Int64>)
        /// A JSON integer within these bounds (`Int32`, `Int64`).
        case integer(ClosedRange<Int64>)
        /// Epoch milliseconds as a JSON integer: Apple's `Date`s outside Xcode.
        case date
        /// A JSON boolean.
        case bool
        /// An array of strings.
        case stringArray
        /// A nested object (Advanced Commerce data, which the simulator never writes).
        case object

        static let int32 = FieldType.integer(Int64(Int32.min)...Int64(Int32.max))
        static let int64 = FieldType.integer(Int64.min...Int64.max)

        /// Why `value` is not of this type, or nil when it is.
        func mismatch(_ value: JSONValue) -> String? {
            switch (self, value) {
            case (.string, .string): return nil
            case (.uuid, .string(let text)):
                return UUID(uuidString: text) == nil ? "is not a UUID" : nil
            case (.numericString, .string(let text)):
                return !text.isEmpty && text.allSatisfy(\.isASCII) && text.allSatisfy(\.isNumber) ? nil : "is not a numeric string"
            case (.stringEnum(let values), .string(let text)):
                return values.contains(text) ? nil : "is not one of Apple's values \(values.sorted())"
            case (.integerEnum(let values), .integer(let number)):
                return values.contains(number) ? nil : "is not one of Apple's values \(values.sorted())"
            case (.integer(let range), .integer(let number)):
                return range.contains(number) ? nil : "is out of range"
            case (.date, .integer(let milliseconds)):
                // 2000 … 2100 (long simulated histories reach before the App Store opened): a date in seconds or
                // microseconds falls outside.
                return (946_684_800_000...4_102_444_800_000).contains(milliseconds) ? nil : "is not epoch milliseconds"
            case (.bool, .bool): return nil
            case (.stringArray, .array(let items)):
                return items.allSatisfy { $0.string != nil } ? nil : "is not an array of strings"
            case (.object, .object): return nil
            default:
                return "has the wrong JSON type (expected \(self))"
            }
        }

        var description: String {
            switch self {
            case .string: "string"
            case .uuid: "UUID string"
            case .numericString: "numeric string"
            case .stringEnum: "string enum"
            case .integerEnum: "integer enum"
            case .integer: "integer"
            case .date: "integer epoch milliseconds"
            case .bool: "boolean"
            case .stringArray: "array of strings"
            case .object: "object"
            }
        }
    }

    /// `environment` (`AppStoreEnvironment`).
    static let environments: FieldType = .stringEnum(["Sandbox", "Production", "Xcode", "LocalTesting"])
    /// `offerType` (`OfferType`).
    static let offerTypes: FieldType = .integerEnum([1, 2, 3, 4])
    /// `offerDiscountType` (`OfferDiscountType`).
    static let offerDiscountTypes: FieldType = .stringEnum(["FREE_TRIAL", "PAY_AS_YOU_GO", "PAY_UP_FRONT", "ONE_TIME"])

    /// `ResponseBodyV2DecodedPayload`.
    static let notification: [String: FieldType] = [
        "notificationType": .stringEnum([
            "SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW", "EXPIRED",
            "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED", "CONSUMPTION_REQUEST",
            "RENEWAL_EXTENDED", "REVOKE", "TEST", "RENEWAL_EXTENSION", "REFUND_REVERSED", "EXTERNAL_PURCHASE_TOKEN",
            "ONE_TIME_CHARGE", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE",
        ]),
        "subtype": .stringEnum([
            "INITIAL_BUY", "RESUBSCRIBE", "DOWNGRADE", "UPGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY",
            "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD", "PENDING", "ACCEPTED", "BILLING_RECOVERY", "PRODUCT_NOT_FOR_SALE",
            "SUMMARY", "FAILURE", "UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER",
        ]),
        "notificationUUID": .uuid,
        "data": .object,
        "version": .stringEnum(["2.0"]),
        "signedDate": .date,
        "summary": .object,
        "externalPurchaseToken": .object,
        "appData": .object,
    ]

    /// `Data` (a notification's `data`).
    static let data: [String: FieldType] = [
        "environment": environments,
        "appAppleId": .int64,
        "bundleId": .string,
        "bundleVersion": .string,
        "signedTransactionInfo": .string,
        "signedRenewalInfo": .string,
        "status": .integerEnum([1, 2, 3, 4, 5]),
        "consumptionRequestReason": .stringEnum(["UNINTENDED_PURCHASE", "FULFILLMENT_ISSUE", "UNSATISFIED_WITH_PURCHASE", "LEGAL", "OTHER"]),
    ]

    /// `JWSTransactionDecodedPayload`.
    static let transaction: [String: FieldType] = [
        "originalTransactionId": .numericString,
        "transactionId": .numericString,
        "webOrderLineItemId": .numericString,
        "bundleId": .string,
        "productId": .string,
        "subscriptionGroupIdentifier": .string,
        "purchaseDate": .date,
        "originalPurchaseDate": .date,
        "expiresDate": .date,
        "quantity": .int32,
        "type": .stringEnum(["Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription"]),
        "appAccountToken": .uuid,
        "inAppOwnershipType": .stringEnum(["FAMILY_SHARED", "PURCHASED"]),
        "signedDate": .date,
        "revocationReason": .integerEnum([0, 1]),
        "revocationDate": .date,
        "revocationType": .stringEnum(["REFUND_FULL", "REFUND_PRORATED", "FAMILY_REVOKE"]),
        "revocationPercentage": .int32,
        "isUpgraded": .bool,
        "offerType": offerTypes,
        "offerIdentifier": .string,
        "environment": environments,
        "storefront": .string,
        "storefrontId": .numericString,
        "transactionReason": .stringEnum(["PURCHASE", "RENEWAL"]),
        "currency": .string,
        "price": .int64,
        "offerDiscountType": offerDiscountTypes,
        "appTransactionId": .numericString,
        "offerPeriod": .string,
        "advancedCommerceInfo": .object,
        "billingPlanType": .string,
        "commitmentInfo": .object,
    ]

    /// `JWSRenewalInfoDecodedPayload`.
    static let renewalInfo: [String: FieldType] = [
        "expirationIntent": .integerEnum([1, 2, 3, 4, 5]),
        "originalTransactionId": .numericString,
        "autoRenewProductId": .string,
        "productId": .string,
        "autoRenewStatus": .integerEnum([0, 1]),
        "isInBillingRetryPeriod": .bool,
        "priceIncreaseStatus": .integerEnum([0, 1]),
        "gracePeriodExpiresDate": .date,
        "offerType": offerTypes,
        "offerIdentifier": .string,
        "signedDate": .date,
        "environment": environments,
        "recentSubscriptionStartDate": .date,
        "renewalDate": .date,
        "currency": .string,
        "renewalPrice": .int64,
        "offerDiscountType": offerDiscountTypes,
        "eligibleWinBackOfferIds": .stringArray,
        "appTransactionId": .numericString,
        "offerPeriod": .string,
        "appAccountToken": .uuid,
        "advancedCommerceInfo": .object,
        "commitmentInfo": .object,
        "renewalBillingPlanType": .string,
    ]

    /// Every way `object` departs from `schema`: a field the model does not define, or one of the wrong type
    /// (`null` included: Apple omits absent fields).
    static func violations(of object: JSONValue, against schema: [String: FieldType], at path: String) -> [String] {
        guard case .object(let members) = object else { return ["\(path) is not an object"] }
        return members.keys.sorted().compactMap { key in
            let value = members[key]!
            guard let type = schema[key] else { return "\(path).\(key) is not a field of Apple's model" }
            return type.mismatch(value).map { "\(path).\(key) = \(value) \($0)" }
        }
    }
}
