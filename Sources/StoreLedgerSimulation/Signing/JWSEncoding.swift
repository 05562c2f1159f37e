package import Foundation

/// The byte-level pieces of an App Store-style compact JWS: base64url, canonical JSON, the ES256 `x5c` header
/// and the `header.payload.signature` assembly. ``AppStoreJWSSigner`` uses them to sign genuinely; the test
/// signer uses them to forge.
package enum JWSEncoding {
    /// Unpadded base64url (RFC 7515 §2).
    package static func base64URL(_ data: Data) -> String {
        // Byte-level rewrite of the standard encoding: NSString replacement made signing simulated load
        // (x5c headers of about 3 KB) take milliseconds per notification.
        var bytes = Array(data.base64EncodedData())
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Compact JSON with sorted keys and unescaped slashes, for a dictionary of JSON values
    /// (strings, numbers, bools, arrays, dictionaries, `NSNull`).
    package static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }

    /// Compact JSON with sorted keys and unescaped slashes, for an `Encodable` value (dates are encoded by the
    /// value itself; StoreLedger's `Timestamp` writes epoch milliseconds as Apple does).
    package static func json(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The App Store's header: `{"alg": "ES256", "x5c": [leaf, intermediate, root]}`.
    package static func header(x5c: [String]) -> [String: Any] {
        ["alg": "ES256", "x5c": x5c]
    }

    /// The bytes a JWS signature covers: `base64url(header) "." base64url(payload)`.
    package static func signingInput(header: Data, payload: Data) -> String {
        base64URL(header) + "." + base64URL(payload)
    }

    /// `signingInput "." base64url(signature)`: the compact serialization.
    package static func compact(signingInput: String, signature: Data) -> String {
        signingInput + "." + base64URL(signature)
    }
}
