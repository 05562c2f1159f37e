import Foundation
import SwiftASN1

/// A legacy StoreKit 1 app receipt, read with swift-asn1 only to find which transactions it names (or a StoreKit 1
/// transaction receipt, which names one: ``init(transactionReceipt:)``).
///
/// The receipt's PKCS#7 signature is **not** checked and nothing in it is trusted: the transaction ids it yields
/// are looked up with the App Store Server API, and Apple's signed answer goes through the ledger's verifier like
/// any other input. (Apple's `verifyReceipt` is deprecated and never called.)
///
/// Structure: base64 → ContentInfo (signedData) → SignedData → encapContentInfo → eContent OCTET STRING (BER,
/// possibly chunked) → SET of SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }. Type 2 is the bundle
/// id, 3 the app version, 17 an in-app purchase receipt of the same shape, whose 1702 is the product id, 1703 the
/// transaction id, 1705 the original transaction id, 1704 the purchase date and 1708 the expiry.
package struct AppReceipt: Sendable, Equatable {
    /// One in-app purchase the receipt lists.
    package struct InAppPurchase: Sendable, Equatable {
        /// The product id (1702).
        package var productID: String?
        /// The transaction id (1703).
        package var transactionID: String?
        /// The original transaction id (1705).
        package var originalTransactionID: String?
        /// The purchase date as written (1704, RFC 3339).
        package var purchaseDate: String?
        /// The subscription expiry as written (1708, RFC 3339).
        package var expiresDate: String?

        /// The id to look the purchase up by: its transaction id, else its original transaction id.
        package var lookupID: String? { transactionID ?? originalTransactionID }
    }

    /// The app's bundle id (2).
    package var bundleID: String?
    /// The app version (3).
    package var appVersion: String?
    /// The in-app purchases (17), in receipt order.
    package var inAppPurchases: [InAppPurchase]

    /// The newest purchase of each product, newest first: what to look up to learn everything the receipt holds (a
    /// subscription's renewals share one product; a consumable bought again is the same product). The first
    /// subscription among them (an entry with an expiry) comes first, since that is what a receipt is verified for.
    package var newestOfEachProduct: [InAppPurchase] {
        var seen: Set<String> = []
        let newest = newestFirst.filter { purchase in
            guard purchase.lookupID != nil else { return false }
            return seen.insert(purchase.productID ?? "transaction " + (purchase.lookupID ?? "")).inserted
        }
        guard let subscription = newest.firstIndex(where: { $0.expiresDate != nil }) else { return newest }
        return [newest[subscription]] + newest.enumerated().filter { $0.offset != subscription }.map(\.element)
    }

    /// The purchases by purchase date, newest first (then receipt order reversed).
    private var newestFirst: [InAppPurchase] {
        inAppPurchases.enumerated().sorted { lhs, rhs in
            (lhs.element.purchaseDate ?? "", lhs.offset) > (rhs.element.purchaseDate ?? "", rhs.offset)
        }.map(\.element)
    }

    /// Parses a base64 receipt (whitespace ignored): an app receipt (PKCS#7), or a StoreKit 1 transaction receipt
    /// (``init(transactionReceipt:)``), told apart by their first byte.
    package init(base64Encoded text: String) throws(AppReceiptError) {
        guard let bytes = Self.base64Bytes(text) else { throw AppReceiptError(.notBase64, "the receipt is not base64") }
        if Self.isTransactionReceipt(bytes) {
            try self.init(transactionReceipt: bytes)
        } else {
            try self.init(der: bytes)
        }
    }

    /// Parses the receipt's bytes (BER or DER PKCS#7).
    package init(der bytes: [UInt8]) throws(AppReceiptError) {
        do {
            let contentInfo = try BER.parse(bytes)
            let outer = try Self.children(of: contentInfo, "ContentInfo")
            guard outer.count >= 2, try ASN1ObjectIdentifier(berEncoded: outer[0]) == Self.signedDataOID else {
                throw AppReceiptError(.malformed, "the receipt is not PKCS#7 signed data")
            }
            let signedData = try Self.explicit(outer[1], "ContentInfo.content")
            let fields = try Self.children(of: signedData, "SignedData")
            guard fields.count >= 3 else { throw AppReceiptError(.malformed, "the signed data has no content") }
            let encapsulated = try Self.children(of: fields[2], "encapContentInfo")
            guard encapsulated.count >= 2 else { throw AppReceiptError(.malformed, "the receipt carries no payload") }
            let payload = try Self.octets(try Self.explicit(encapsulated[1], "eContent"))
            let attributes = try Self.attributes(payload)
            bundleID = try attributes.first { $0.type == 2 }.flatMap { try Self.string($0.value) }
            appVersion = try attributes.first { $0.type == 3 }.flatMap { try Self.string($0.value) }
            inAppPurchases = try attributes.filter { $0.type == 17 }.map { attribute in
                let fields = try Self.attributes(attribute.value)
                func text(_ type: Int) throws -> String? { try fields.first { $0.type == type }.flatMap { try Self.string($0.value) } }
                return InAppPurchase(
                    productID: try text(1702), transactionID: try text(1703), originalTransactionID: try text(1705),
                    purchaseDate: try text(1704), expiresDate: try text(1708)
                )
            }
        } catch let error as AppReceiptError {
            throw error
        } catch {
            throw AppReceiptError(.malformed, "the receipt is not a well-formed PKCS#7 app receipt (\(error))")
        }
    }

    private static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]

    private static func children(of node: ASN1Node, _ what: String) throws -> [ASN1Node] {
        guard case .constructed(let children) = node.content else { throw AppReceiptError(.malformed, "\(what) is not a structure") }
        return Array(children)
    }

    /// The single child of a context-specific `[0] EXPLICIT` wrapper.
    private static func explicit(_ node: ASN1Node, _ what: String) throws -> ASN1Node {
        guard node.identifier.tagClass == .contextSpecific, node.identifier.tagNumber == 0,
            let child = try children(of: node, what).first
        else { throw AppReceiptError(.malformed, "\(what) is not the expected [0] field") }
        return child
    }

    /// An OCTET STRING's bytes, joining the chunks of a constructed (BER) one.
    private static func octets(_ node: ASN1Node) throws -> [UInt8] {
        guard node.identifier.tagClass == .universal, node.identifier.tagNumber == 4 else {
            throw AppReceiptError(.malformed, "the receipt payload is not an OCTET STRING")
        }
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let chunks): return try chunks.flatMap { try octets($0) }
        }
    }

    /// The `SET OF SEQUENCE { type, version, value }` in `bytes`.
    private static func attributes(_ bytes: [UInt8]) throws -> [(type: Int, value: [UInt8])] {
        let set = try BER.parse(bytes)
        guard set.identifier == .set else { throw AppReceiptError(.malformed, "the receipt payload is not a SET of attributes") }
        return try children(of: set, "payload").compactMap { attribute in
            let fields = try children(of: attribute, "attribute")
            guard fields.count == 3, case .primitive = fields[2].content else { return nil }
            return (try Int(berEncoded: fields[0]), try octets(fields[2]))
        }
    }

    /// A UTF8String or IA5String encoded inside an attribute value; nil for other types, an empty value, or an empty
    /// string (Apple's receipts carry every field of an in-app purchase, an expiry or cancellation date that does not
    /// apply as an empty IA5String: a consumable's expiry is no expiry).
    private static func string(_ bytes: [UInt8]) throws -> String? {
        guard !bytes.isEmpty else { return nil }
        let node = try BER.parse(bytes)
        guard case .primitive(let content) = node.content, !content.isEmpty,
            node.identifier == .utf8String || node.identifier == .ia5String || node.identifier == .printableString
        else { return nil }
        return String(decoding: content, as: UTF8.self)
    }
}
