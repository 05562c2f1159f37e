/// The few fields of a decoded JWS payload that verification needs. Every field is optional, unknown fields are
/// ignored and a field of an unexpected type reads as absent; the full models live in StoreLedgerCore.
struct SignedPayloadClaims: Decodable, Sendable {
    /// One of a notification's `data`, `summary` or `appData` objects.
    struct Section: Decodable, Sendable {
        var environment: String?
        var bundleId: String?
        var appAppleId: Int64?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
        var signedAppTransactionInfo: String?

        private enum CodingKeys: String, CodingKey {
            case environment, bundleId, appAppleId
            case signedTransactionInfo, signedRenewalInfo, signedAppTransactionInfo
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            environment = container.lenientString(.environment)
            bundleId = container.lenientString(.bundleId)
            appAppleId = container.lenientInt64(.appAppleId)
            signedTransactionInfo = container.lenientString(.signedTransactionInfo)
            signedRenewalInfo = container.lenientString(.signedRenewalInfo)
            signedAppTransactionInfo = container.lenientString(.signedAppTransactionInfo)
        }
    }

    /// A notification's `externalPurchaseToken` object.
    struct ExternalPurchaseToken: Decodable, Sendable {
        var externalPurchaseId: String?
        var bundleId: String?
        var appAppleId: Int64?

        private enum CodingKeys: String, CodingKey {
            case externalPurchaseId, bundleId, appAppleId
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            externalPurchaseId = container.lenientString(.externalPurchaseId)
            bundleId = container.lenientString(.bundleId)
            appAppleId = container.lenientInt64(.appAppleId)
        }

        /// Sandbox iff the id starts with `SANDBOX`, as Apple documents.
        var environment: String? {
            externalPurchaseId.map { $0.hasPrefix("SANDBOX") ? "Sandbox" : "Production" }
        }
    }

    var signedDate: Double?
    var environment: String?
    var receiptType: String?
    var bundleId: String?
    var appAppleId: Int64?
    var notificationUUID: String?
    var notificationType: String?
    var subtype: String?
    var version: String?
    var data: Section?
    var summary: Section?
    var appData: Section?
    var externalPurchaseToken: ExternalPurchaseToken?

    private enum CodingKeys: String, CodingKey {
        case signedDate, environment, receiptType, bundleId, appAppleId
        case notificationUUID, notificationType, subtype, version
        case data, summary, appData, externalPurchaseToken
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedDate = container.lenientDouble(.signedDate)
        environment = container.lenientString(.environment)
        receiptType = container.lenientString(.receiptType)
        bundleId = container.lenientString(.bundleId)
        appAppleId = container.lenientInt64(.appAppleId)
        notificationUUID = container.lenientString(.notificationUUID)
        notificationType = container.lenientString(.notificationType)
        subtype = container.lenientString(.subtype)
        version = container.lenientString(.version)
        data = container.lenientObject(Section.self, .data)
        summary = container.lenientObject(Section.self, .summary)
        appData = container.lenientObject(Section.self, .appData)
        externalPurchaseToken = container.lenientObject(ExternalPurchaseToken.self, .externalPurchaseToken)
    }

    /// Where a notification says which app and environment it is for: `data`, `summary`, `appData` or
    /// `externalPurchaseToken`, whichever is present.
    var notificationScope: (bundleId: String?, appAppleId: Int64?, environment: String?) {
        if let section = data ?? summary ?? appData {
            return (section.bundleId, section.appAppleId, section.environment)
        }
        if let token = externalPurchaseToken {
            return (token.bundleId, token.appAppleId, token.environment)
        }
        return (nil, nil, nil)
    }
}
