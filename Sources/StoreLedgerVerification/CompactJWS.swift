import Foundation

/// A compact JWS split into its parts, with header and payload decoded but nothing verified yet.
struct CompactJWS: Sendable {
    /// The JOSE header fields verification looks at.
    struct Header: Decodable, Sendable {
        /// `alg`: must be `ES256`.
        var alg: String?
        /// `x5c`: base64 DER certificates, leaf first.
        var x5c: [String]?
        /// `kid` (Xcode sets one; unused).
        var kid: String?

        private enum CodingKeys: String, CodingKey {
            case alg, x5c, kid
        }

        /// Decodes leniently: absent or mistyped fields read as `nil`.
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            alg = container.lenientString(.alg)
            kid = container.lenientString(.kid)
            // An x5c that is present but not an array of strings is malformed, not absent.
            x5c = try container.decodeIfPresent([String].self, forKey: .x5c)
        }
    }

    /// The token exactly as received.
    let token: String
    /// The decoded header.
    let header: Header
    /// The decoded payload bytes (JSON).
    let payloadJSON: Data
    /// The decoded signature bytes (64 bytes for a well-formed ES256 signature).
    let signature: Data

    /// Splits and decodes `token`.
    ///
    /// - Throws: ``VerificationError/Code/malformed`` unless the token has three base64url segments whose header
    ///   and payload are JSON objects.
    init(_ token: String) throws(VerificationError) {
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw .malformed("a compact JWS has 3 dot-separated segments, this has \(segments.count)")
        }
        guard !segments[0].isEmpty, !segments[1].isEmpty else {
            throw .malformed("the JWS header or payload segment is empty")
        }
        guard let headerBytes = Self.base64URLDecode(segments[0]) else {
            throw .malformed("the JWS header is not base64url")
        }
        guard let payloadBytes = Self.base64URLDecode(segments[1]) else {
            throw .malformed("the JWS payload is not base64url")
        }
        guard let signatureBytes = Self.base64URLDecode(segments[2]) else {
            throw .malformed("the JWS signature is not base64url")
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw .malformed("the JWS header is not a JSON object with a string-array x5c")
        }
        self.token = token
        self.header = header
        self.payloadJSON = payloadBytes
        self.signature = signatureBytes
    }

    /// Decodes the payload's claims.
    ///
    /// - Throws: ``VerificationError/Code/malformed`` when the payload is not a JSON object.
    func claims() throws(VerificationError) -> SignedPayloadClaims {
        do {
            return try JSONDecoder().decode(SignedPayloadClaims.self, from: payloadJSON)
        } catch {
            throw .malformed("the JWS payload is not a JSON object")
        }
    }

    /// Decodes unpadded (or padded) base64url; `nil` for standard-alphabet or any other foreign character.
    static func base64URLDecode(_ segment: Substring) -> Data? {
        guard !segment.contains("+"), !segment.contains("/") else { return nil }
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        switch base64.count % 4 {
        case 0: break
        case 1: return nil
        case let remainder: base64 += String(repeating: "=", count: 4 - remainder)
        }
        return Data(base64Encoded: base64)
    }
}
