import Foundation

/// Small JWS surgery for tests.
enum JWSSurgery {
    /// `token` with one byte of its signature flipped.
    static func flippingSignatureByte(of token: String) -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var signature = base64URLDecode(parts[2])
        signature[signature.startIndex + 5] ^= 0x80
        parts[2] = base64URLEncode(signature)
        return parts.joined(separator: ".")
    }

    /// The JSON object of `token`'s header.
    static func header(of token: String) -> [String: Any] {
        let segment = String(token.split(separator: ".")[0])
        return (try? JSONSerialization.jsonObject(with: base64URLDecode(segment))) as? [String: Any] ?? [:]
    }

    /// `token` with its header replaced by `header` (JSON object), payload and signature kept.
    static func replacingHeader(of token: String, with header: [String: Any]) throws -> String {
        var parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[0] = base64URLEncode(try JSONSerialization.data(withJSONObject: header))
        return parts.joined(separator: ".")
    }

    /// Decodes unpadded base64url.
    static func base64URLDecode(_ text: String) -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64) ?? Data()
    }

    /// Encodes unpadded base64url.
    static func base64URLEncode(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The JSON object of a verified payload.
    static func object(_ json: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] ?? [:]
    }
}
