/// The few fields of a decoded JWS payload that verification needs. Every field is optional, unknown fields are
/// ignored and a field of an unexpected type reads as absent; the full models live in StoreLedgerCore.
struct SignedPayloadClaims: Decodable, Sendable {
    /// One of a notification's `data`, `summary` or `appData` objects.
    struct Section: Decodable, Sendable {
        /// `environment`.
        var environment: String?
        /// `bundleId`.
        var bundleId: String?
        /// `appAppleId` (integral number or numeric string).
        var appAppleId: Int64?
        /// `signedTransactionInfo`: a nested JWS.
        var signedTransactionInfo: String?
        /// `signedRenewalInfo`: a nested JWS.
        var signedRenewalInfo: String?
        /// `signedAppTransactionInfo`: a nested JWS.
        var signedAppTransactionInfo: String?

        private enum CodingKeys: String, CodingKey {
            case environment, bundleId, appAppleId
            case signedTransactionInfo, signedRenewalInfo, signedAppTransactionInfo
        }

        /// Decodes leniently: absent or mistyped fields read as `nil`.
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
        /// `externalPurchaseId`; `SANDBOX…` in Sandbox.
        var externalPurchaseId: String?
        /// `bundleId`.
        var bundleId: String?
        /// `appAppleId` (integral number or numeric string).
        var appAppleId: Int64?

        private enum CodingKeys: String, CodingKey {
            case externalPurchaseId, bundleId, appAppleId
        }

        /// Decodes leniently: absent or mistyped fields read as `nil`.
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

    /// `signedDate` in epoch milliseconds, possibly fractional.
    var signedDate: Double?
    /// `receiptCreationDate`: when the App Store signed an app transaction, which has no `signedDate`.
    var receiptCreationDate: Double?
    /// `environment`.
    var environment: String?
    /// `receiptType`: an app transaction's environment.
    var receiptType: String?
    /// `bundleId`.
    var bundleId: String?
    /// `appAppleId` (integral number or numeric string).
    var appAppleId: Int64?
    /// `notificationUUID`.
    var notificationUUID: String?
    /// `notificationType`.
    var notificationType: String?
    /// `subtype`.
    var subtype: String?
    /// `version`.
    var version: String?
    /// `data`.
    var data: Section?
    /// `summary`.
    var summary: Section?
    /// `appData`.
    var appData: Section?
    /// `externalPurchaseToken`.
    var externalPurchaseToken: ExternalPurchaseToken?

    private enum CodingKeys: String, CodingKey {
        case signedDate, receiptCreationDate, environment, receiptType, bundleId, appAppleId
        case notificationUUID, notificationType, subtype, version
        case data, summary, appData, externalPurchaseToken
    }

    /// Decodes leniently: absent or mistyped fields read as `nil`.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        signedDate = container.lenientDouble(.signedDate)
        receiptCreationDate = container.lenientDouble(.receiptCreationDate)
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

    /// When Apple signed the payload, in epoch milliseconds: `signedDate`, or an app transaction's
    /// `receiptCreationDate` (Apple's libraries check an app transaction's chain at that date).
    var signingDate: Double? { signedDate ?? receiptCreationDate }

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
