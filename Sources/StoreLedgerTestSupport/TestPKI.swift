package import Crypto
package import Foundation
package import StoreLedgerSimulation
package import SwiftASN1
package import X509

/// A throwaway App Store-like PKI: a root CA, an Apple-like intermediate CA and a signing leaf, all P-256.
///
/// Trust ``rootDER`` in a verifier (or export it with ``writeRootDER(to:)`` / ``rootBase64`` for
/// `APPLE_ROOT_CAS_DER_BASE64`) and sign payloads with a ``TestSigner``. ``Options`` produces the adversarial
/// variants: Apple look-alike names, missing OIDs, a non-CA intermediate, a leaf expired at `signedDate`.
/// Every instance has fresh random keys. Minting is `StoreLedgerSimulation`'s ``SigningChain``, the same code
/// the development CA uses.
package struct TestPKI: Sendable {
    /// Apple's App Store signing leaf marker, `1.2.840.113635.100.6.11.1`.
    package static let leafMarkerOID: ASN1ObjectIdentifier = SigningChain.leafMarkerOID
    /// Apple's WWDR intermediate marker, `1.2.840.113635.100.6.2.1`.
    package static let intermediateMarkerOID: ASN1ObjectIdentifier = SigningChain.intermediateMarkerOID

    /// How this PKI was minted.
    package let options: Options
    /// The minted chain.
    package let chain: SigningChain

    /// Mints a new PKI.
    package init(_ options: Options = .standard) throws {
        self.options = options
        self.chain = try SigningChain(options)
    }

    /// The root's private key.
    package var rootKey: P256.Signing.PrivateKey { chain.rootKey }
    /// The intermediate's private key.
    package var intermediateKey: P256.Signing.PrivateKey { chain.intermediateKey }
    /// The leaf's private key: it signs every JWS.
    package var leafKey: P256.Signing.PrivateKey { chain.leafKey }
    /// The self-signed root.
    package var root: Certificate { chain.root }
    /// The intermediate, issued by the root.
    package var intermediate: Certificate { chain.intermediate }
    /// The leaf, issued by the intermediate.
    package var leaf: Certificate { chain.leaf }

    /// The root as DER: what a verifier under test trusts.
    package var rootDER: Data { chain.rootDER }
    /// The intermediate as DER.
    package var intermediateDER: Data { chain.intermediateDER }
    /// The leaf as DER.
    package var leafDER: Data { chain.leafDER }
    /// The root as base64 DER: a value for `APPLE_ROOT_CAS_DER_BASE64`.
    package var rootBase64: String { chain.rootBase64 }
    /// The `x5c` header value: base64 DER of leaf, intermediate, root (Apple's order).
    package var x5c: [String] { chain.x5c }

    /// Writes the root certificate as DER to `url` (for `storeledger verify --root` and dev setups).
    package func writeRootDER(to url: URL) throws {
        try rootDER.write(to: url, options: .atomic)
    }

    /// A signer using this PKI's leaf and chain.
    package func signer(
        bundleID: String = TestSigner.defaultBundleID,
        appAppleID: Int64 = TestSigner.defaultAppAppleID,
        environment: String = "Sandbox"
    ) -> TestSigner {
        TestSigner(pki: self, bundleID: bundleID, appAppleID: appAppleID, environment: environment)
    }
}
