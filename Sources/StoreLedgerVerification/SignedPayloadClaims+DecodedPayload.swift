import StoreLedgerCore

extension SignedPayloadClaims {
    /// The claims of a payload ``PlainJSONReader`` read into its model: what `JSONDecoder` would read from the same
    /// text. The plain reader reads only well-typed values (a mistyped value, a claim given twice or any other unusual
    /// text makes it give up, and `JSONDecoder` reads the claims instead), and for those the lenient claims are the
    /// typed values. A notification's `summary`, `appData` and `externalPurchaseToken` are absent here: the plain
    /// reader accepts them only as `null`, which reads as absent. Claims no caller reads for the kind are left out:
    /// a notification's top-level `environment`, `bundleId`, `appAppleId` and `receiptType` and its
    /// `data.signedAppTransactionInfo` (its scope is `data`; app transactions are nested in `appData`), a transaction's
    /// `appAppleId` and `receiptType`, a renewal info's `bundleId` (it has none).
    init(_ decoded: DecodedPayload) {
        self.init()
        switch decoded {
        case .notification(let plain):
            let payload = plain.payload
            signedDate = payload.signedDate?.millisecondsSince1970
            notificationUUID = payload.notificationUUID?.rawValue
            notificationType = payload.notificationType?.rawValue
            subtype = payload.subtype?.rawValue
            version = payload.version
            data = payload.data.map { data in
                var section = Section()
                section.environment = data.environment?.rawValue
                section.bundleId = data.bundleID?.rawValue
                section.appAppleId = data.appAppleID
                section.signedTransactionInfo = data.signedTransactionInfo
                section.signedRenewalInfo = data.signedRenewalInfo
                return section
            }
        case .transaction(let transaction):
            signedDate = transaction.signedDate?.millisecondsSince1970
            environment = transaction.environment?.rawValue
            bundleId = transaction.bundleID?.rawValue
        case .renewalInfo(let renewalInfo):
            signedDate = renewalInfo.signedDate?.millisecondsSince1970
            environment = renewalInfo.environment?.rawValue
        }
    }

    /// No claim.
    private init() {}
}

extension SignedPayloadClaims.Section {
    /// No member.
    fileprivate init() {}
}
