import Foundation

/// Builds StoreKit 1 app receipts (PKCS#7 signed data, unsigned here: the receipt's signature is never checked) holding
/// the in-app purchases a test needs, DER-encoded as Apple lays them out: ContentInfo → SignedData →
/// encapContentInfo → eContent OCTET STRING → SET of SEQUENCE { type, version, value }.
enum AppReceiptDER {
    /// One in-app purchase (type 17): product 1702, transaction 1703, original 1705, purchase date 1704, expiry 1708.
    struct Purchase {
        var productID: String
        var transactionID: String
        var originalTransactionID: String
        var purchaseDate: String
        var expiresDate: String?
    }

    /// The base64 receipt of `bundleID` holding `purchases`, in that order.
    static func base64(bundleID: String = "com.example.storeledger", purchases: [Purchase]) -> String {
        var attributes = [attribute(2, utf8(bundleID)), attribute(3, utf8("1.0"))]
        for purchase in purchases {
            var fields = [
                attribute(1702, utf8(purchase.productID)), attribute(1703, utf8(purchase.transactionID)),
                attribute(1705, utf8(purchase.originalTransactionID)), attribute(1704, ia5(purchase.purchaseDate)),
            ]
            if let expires = purchase.expiresDate { fields.append(attribute(1708, ia5(expires))) }
            attributes.append(attribute(17, tlv(0x31, fields.flatMap { $0 })))
        }
        let payload = tlv(0x31, attributes.flatMap { $0 })
        let data: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x01]
        let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let encapsulated = tlv(0x30, data + tlv(0xA0, tlv(0x04, payload)))
        let signedData = tlv(0x30, integer(1) + tlv(0x31, []) + encapsulated)
        return Data(tlv(0x30, signedDataOID + tlv(0xA0, signedData))).base64EncodedString()
    }

    /// `SEQUENCE { INTEGER type, INTEGER 1, OCTET STRING value }`.
    private static func attribute(_ type: Int, _ value: [UInt8]) -> [UInt8] {
        tlv(0x30, integer(type) + integer(1) + tlv(0x04, value))
    }

    private static func utf8(_ text: String) -> [UInt8] { tlv(0x0C, Array(text.utf8)) }
    private static func ia5(_ text: String) -> [UInt8] { tlv(0x16, Array(text.utf8)) }

    /// A non-negative INTEGER, minimal two's complement.
    private static func integer(_ value: Int) -> [UInt8] {
        var bytes = withUnsafeBytes(of: UInt64(value).bigEndian, Array.init).drop { $0 == 0 }.map { $0 }
        if bytes.isEmpty || bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
        return tlv(0x02, bytes)
    }

    /// Tag, DER length, content.
    private static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let count = content.count
        let length: [UInt8] =
            count < 0x80 ? [UInt8(count)] : count <= 0xFF ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
        return [tag] + length + content
    }
}
