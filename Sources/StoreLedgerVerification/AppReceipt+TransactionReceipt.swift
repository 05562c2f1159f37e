import Foundation

extension AppReceipt {
    /// Reads a StoreKit 1 *transaction* receipt (`SKPaymentTransaction.transactionReceipt`, deprecated since iOS 7 but
    /// still sent by old apps) instead of an app receipt: not PKCS#7 but an old-style property list,
    /// `{ "purchase-info" = "<base64>"; "signature" = "…"; "environment" = "Sandbox"; … }`, whose `purchase-info` is
    /// another such list naming one purchase (`"transaction-id" = "1000000123456789";`, `"product-id"`,
    /// `"original-transaction-id"`, `"bid"`, `"bvrs"`). Apple's App Store Server Library reads `purchase-info` and its
    /// `transaction-id` the same way (`ReceiptUtility.extractTransactionIdFromTransactionReceipt`); a receipt without a
    /// transaction id has its original transaction id looked up instead, as an app receipt's purchase would.
    ///
    /// As with an app receipt, nothing here is trusted (the signature is not checked): the transaction id is only
    /// looked up with the App Store Server API, whose signed answer is verified.
    init(transactionReceipt bytes: [UInt8]) throws(AppReceiptError) {
        let receipt = try Self.propertyList(bytes, "the transaction receipt")
        guard let purchaseInfo = receipt["purchase-info"] else {
            throw AppReceiptError(.malformed, "the transaction receipt has no purchase-info")
        }
        guard let purchaseBytes = Self.base64Bytes(purchaseInfo) else {
            throw AppReceiptError(.malformed, "the transaction receipt's purchase-info is not base64")
        }
        let purchase = try Self.propertyList(purchaseBytes, "the transaction receipt's purchase-info")
        func value(_ key: String) -> String? { purchase[key].flatMap { $0.isEmpty ? nil : $0 } }
        bundleID = value("bid")
        appVersion = value("bvrs")
        let listed = InAppPurchase(
            productID: value("product-id"), transactionID: value("transaction-id"),
            originalTransactionID: value("original-transaction-id"), purchaseDate: nil, expiresDate: nil
        )
        inAppPurchases = listed.transactionID == nil && listed.originalTransactionID == nil ? [] : [listed]
    }

    /// Whether decoded receipt bytes are a transaction receipt's text (`{` after optional whitespace) rather than an
    /// app receipt's PKCS#7 (which starts with a DER SEQUENCE, 0x30).
    static func isTransactionReceipt(_ bytes: [UInt8]) -> Bool {
        bytes.first { !Self.isWhitespace($0) } == UInt8(ascii: "{")
    }

    /// Base64 text's bytes, whitespace ignored; nil when it is not base64.
    static func base64Bytes(_ text: String) -> [UInt8]? {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty, let data = Data(base64Encoded: compact) else { return nil }
        return [UInt8](data)
    }

    /// An old-style (OpenStep) property list of quoted strings, `{ "key" = "value"; … }`: the only shape transaction
    /// receipts use. In strings, `\n`, `\r` and `\t` are read as the control characters and a backslash before any
    /// other character as that character (`\"`, `\\`; Apple writes no other). Whitespace around the tokens, and
    /// whitespace or NUL bytes after the closing brace (padding some clients add), are allowed; anything else is an
    /// error that names `what`.
    private static func propertyList(_ bytes: [UInt8], _ what: String) throws(AppReceiptError) -> [String: String] {
        var index = 0
        func skipWhitespace() {
            while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        }
        func expect(_ byte: UInt8, _ expected: String) throws(AppReceiptError) {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == byte else {
                throw AppReceiptError(.malformed, "\(what) is not a property list: expected \(expected) at byte \(index)")
            }
            index += 1
        }
        func quoted() throws(AppReceiptError) -> String {
            try expect(UInt8(ascii: "\""), "a quoted string")
            var text: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { break }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "n"): text.append(0x0A)
                    case UInt8(ascii: "r"): text.append(0x0D)
                    case UInt8(ascii: "t"): text.append(0x09)
                    default: text.append(escaped)
                    }
                default:
                    text.append(byte)
                }
            }
            throw AppReceiptError(.malformed, "\(what) is not a property list: a string is not closed")
        }
        var entries: [String: String] = [:]
        try expect(UInt8(ascii: "{"), "{")
        while true {
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            }
            let key = try quoted()
            try expect(UInt8(ascii: "="), "=")
            let value = try quoted()
            try expect(UInt8(ascii: ";"), ";")
            guard entries.updateValue(value, forKey: key) == nil else {
                // The key comes from the caller: at most 64 characters of it go back in the error.
                throw AppReceiptError(.malformed, "\(what) names \(key.prefix(64)) twice")
            }
        }
        while index < bytes.count, isWhitespace(bytes[index]) || bytes[index] == 0 { index += 1 }
        guard index == bytes.count else { throw AppReceiptError(.malformed, "\(what) has bytes after its closing }") }
        return entries
    }

    /// ASCII whitespace (space, tab, line feed, carriage return).
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
