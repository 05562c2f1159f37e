package import Foundation

/// A notification's JSON read in Apple's plain shape by ``PlainJSONReader`` alone: the model, and where the nested
/// JWS members are in the text it was read from, so that the text without them (what the ledger stores) is cut only
/// by the caller that stores it, not by every reader (verification reads notifications this way before it has
/// authenticated them).
package struct PlainNotification: Hashable, Sendable {
    /// The decoded notification (its nested JWS texts still in `data`).
    package let payload: NotificationPayload
    /// The text it was read from.
    private let json: Data
    /// Where `data` and its members other than the nested JWS are in `json`; nil when there is no `data` object.
    private let stripped: PlainJSONReader.Stripped?

    /// Reads `json`, or nil when it is not of Apple's plain shape (then `JSONDecoder` decodes it:
    /// ``NotificationPayload/decodeStrippingNestedJWS(json:)``).
    package init?(json: Data) {
        guard let read = try? PlainJSONReader.read(json, { reader throws(PlainJSONReader.Fallback) in try reader.notification() }) else {
            return nil
        }
        payload = read.payload
        self.json = json
        stripped = read.stripped
    }

    /// The text without the members `data.signedTransactionInfo` and `data.signedRenewalInfo`
    /// (``NotificationPayload/decodeStrippingNestedJWS(json:)``); nil when there is no `data` object. The `data`
    /// object's text is replaced by its kept members, gathered in an array and made `Data` once (each of a dozen
    /// `Data.append`s went through `Data`'s representations).
    package var withoutNestedJWS: Data? {
        guard let stripped else { return nil }
        return json.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var result: [UInt8] = []
            result.reserveCapacity(bytes.count - stripped.removedBytes)
            func append(_ range: Range<Int>) { result.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range])) }
            append(0..<stripped.object.lowerBound)
            result.append(UInt8(ascii: "{"))
            for (offset, member) in stripped.kept.enumerated() {
                if offset > 0 { result.append(UInt8(ascii: ",")) }
                append(member)
            }
            result.append(UInt8(ascii: "}"))
            append(stripped.object.upperBound..<bytes.count)
            return Data(result)
        }
    }
}
