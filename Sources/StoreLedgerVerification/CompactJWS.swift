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
        /// The chain cache's key for `x5c`, made once per decoded header.
        var chainKey: ChainCache.Key?

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
            chainKey = x5c.map(ChainCache.Key.init(x5c:))
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
    /// What the signature covers: the ASCII bytes of `header.payload` as received.
    let signingInput: Data

    /// Splits and decodes `token`; a header segment byte-identical to one in `recentHeaders` is not decoded again.
    ///
    /// - Throws: ``VerificationError/Code/malformed`` unless the token has three base64url segments whose header
    ///   and payload are JSON objects.
    init(_ token: String, recentHeaders: RecentHeaders? = nil) throws(VerificationError) {
        // Works on the UTF-8 bytes: a JWS is ASCII, and Character-level splitting and Foundation's string
        // replacement dominated verification time (over 80% with x5c headers and nested JWS).
        let bytes = Array(token.utf8)
        let dot = UInt8(ascii: ".")
        let segments = bytes.split(separator: dot, omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw .malformed("a compact JWS has 3 dot-separated segments, this has \(segments.count)")
        }
        guard !segments[0].isEmpty, !segments[1].isEmpty else {
            throw .malformed("the JWS header or payload segment is empty")
        }
        guard let payloadBytes = Self.base64URLDecode(segments[1]) else {
            throw .malformed("the JWS payload is not base64url")
        }
        guard let signatureBytes = Self.base64URLDecode(segments[2]) else {
            throw .malformed("the JWS signature is not base64url")
        }
        let header: Header
        if let recentHeaders {
            header = try recentHeaders.header(for: segments[0], decode: Self.decodeHeader)
        } else {
            header = try Self.decodeHeader(segments[0])
        }
        self.token = token
        self.header = header
        self.payloadJSON = payloadBytes
        self.signature = signatureBytes
        self.signingInput = Data(bytes[bytes.startIndex..<segments[1].endIndex])
    }

    /// Decodes a header segment.
    static func decodeHeader(_ segment: ArraySlice<UInt8>) throws(VerificationError) -> Header {
        guard let headerBytes = base64URLDecode(segment) else {
            throw .malformed("the JWS header is not base64url")
        }
        do {
            return try JSONDecoder().decode(Header.self, from: headerBytes)
        } catch {
            throw .malformed("the JWS header is not a JSON object with a string-array x5c")
        }
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

    /// Decodes unpadded (or padded) base64url given as UTF-8 bytes; `nil` for standard-alphabet or any other
    /// foreign character, a misplaced `=`, or a length no encoding produces.
    ///
    /// One table-driven pass straight to bytes: header segments carry the whole x5c chain (about 5 KB), so a
    /// per-character rewrite into standard base64 followed by Foundation's decoder cost more than the ECDSA
    /// verification itself.
    static func base64URLDecode(_ segment: ArraySlice<UInt8>) -> Data? {
        var end = segment.endIndex
        var padding = 0
        while end > segment.startIndex, segment[end - 1] == UInt8(ascii: "="), padding < 2 {
            end -= 1
            padding += 1
        }
        let count = end - segment.startIndex
        if padding > 0, (count + padding) % 4 != 0 { return nil }
        guard count % 4 != 1 else { return nil }
        let decodedCount = count / 4 * 3 + max(0, count % 4 - 1)
        var valid = true
        let decoded = [UInt8](unsafeUninitializedCapacity: decodedCount) { output, initialized in
            initialized = 0
            Base64URLAlphabet.values.withUnsafeBufferPointer { table in
                segment.withUnsafeBufferPointer { input in
                    var read = 0
                    var written = 0
                    // Whole quanta: 4 characters -> 3 bytes.
                    while read + 4 <= count {
                        let a = table[Int(input[read])]
                        let b = table[Int(input[read + 1])]
                        let c = table[Int(input[read + 2])]
                        let d = table[Int(input[read + 3])]
                        guard (a | b | c | d) & 0xC0 == 0 else {
                            valid = false
                            return
                        }
                        let quantum = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                        output[written] = UInt8(truncatingIfNeeded: quantum >> 16)
                        output[written + 1] = UInt8(truncatingIfNeeded: quantum >> 8)
                        output[written + 2] = UInt8(truncatingIfNeeded: quantum)
                        read += 4
                        written += 3
                    }
                    // The tail: 2 characters -> 1 byte, 3 -> 2; leftover bits are ignored, as by Foundation's
                    // and most other decoders.
                    let tail = count - read
                    if tail >= 2 {
                        let a = table[Int(input[read])]
                        let b = table[Int(input[read + 1])]
                        let c = tail == 3 ? table[Int(input[read + 2])] : 0
                        guard (a | b | c) & 0xC0 == 0 else {
                            valid = false
                            return
                        }
                        let quantum = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                        output[written] = UInt8(truncatingIfNeeded: quantum >> 16)
                        written += 1
                        if tail == 3 {
                            output[written] = UInt8(truncatingIfNeeded: quantum >> 8)
                            written += 1
                        }
                    }
                    initialized = written
                }
            }
        }
        return valid ? Data(decoded) : nil
    }
}

/// The base64url alphabet (RFC 4648 §5) as a 256-entry lookup table.
private enum Base64URLAlphabet {
    /// Marks a byte outside the alphabet.
    static let invalid: UInt8 = 0xFF

    /// Each byte's 6-bit value, or ``invalid``.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        for (index, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8.enumerated() {
            table[Int(character)] = UInt8(index)
        }
        return table
    }()
}
