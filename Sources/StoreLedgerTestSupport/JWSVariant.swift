package import Crypto
package import Foundation

/// How a ``TestSigner`` should (mis)sign a JWS: genuine, or one of the forgeries a verifier must reject.
package enum JWSVariant: Sendable {
    /// ES256 by the PKI's leaf with the 3-certificate `x5c` chain, as Apple does.
    case genuine
    /// Header `alg: none` and an empty signature.
    case algNone
    /// Header `alg: HS256`, HMAC-SHA256 keyed with the given bytes (e.g. the leaf's public key: key confusion).
    case hs256(key: Data)
    /// Only leaf and intermediate in `x5c`.
    case twoCertificateChain
    /// No `x5c` header at all.
    case missingX5C
    /// Genuinely signed, then the payload is replaced by one with an extra field: the signature no longer matches.
    case tamperedPayload
    /// Genuinely signed, then one byte of the signature is flipped.
    case flippedSignatureByte
    /// The PKI's `x5c` header, but signed with another key (a forgery reusing a genuine chain).
    case signedWithKey(P256.Signing.PrivateKey)
    /// Arbitrary `x5c` entries (base64 DER) with a signature by the PKI's leaf.
    case customX5C([String])
}
