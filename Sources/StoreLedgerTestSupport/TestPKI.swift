public import Crypto
public import Foundation
public import SwiftASN1
public import X509

/// A throwaway App Store-like PKI: a root CA, an Apple-like intermediate CA and a signing leaf, all P-256.
///
/// Trust ``rootDER`` in a verifier (or export it with ``writeRootDER(to:)`` / ``rootBase64`` for
/// `APPLE_ROOT_CAS_DER_BASE64`) and sign payloads with a ``TestSigner``. ``Options`` produces the adversarial
/// variants: Apple look-alike names, missing OIDs, a non-CA intermediate, a leaf expired at `signedDate`.
/// Every instance has fresh random keys.
public struct TestPKI: Sendable {
    /// Apple's App Store signing leaf marker, `1.2.840.113635.100.6.11.1`.
    public static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Apple's WWDR intermediate marker, `1.2.840.113635.100.6.2.1`.
    public static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// How this PKI was minted.
    public let options: Options
    /// The root's private key.
    public let rootKey: P256.Signing.PrivateKey
    /// The intermediate's private key.
    public let intermediateKey: P256.Signing.PrivateKey
    /// The leaf's private key: it signs every JWS.
    public let leafKey: P256.Signing.PrivateKey
    /// The self-signed root.
    public let root: Certificate
    /// The intermediate, issued by the root.
    public let intermediate: Certificate
    /// The leaf, issued by the intermediate.
    public let leaf: Certificate

    /// Mints a new PKI.
    public init(_ options: Options = .standard) throws {
        self.options = options
        rootKey = P256.Signing.PrivateKey()
        intermediateKey = P256.Signing.PrivateKey()
        leafKey = P256.Signing.PrivateKey()
        let names = try Self.subjects(options.names)
        let markerValue = try Self.derNull()

        let rootPublicKey = Certificate.PublicKey(rootKey.publicKey)
        let rootSKI = SubjectKeyIdentifier(hash: rootPublicKey)
        root = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: rootPublicKey,
            notValidBefore: options.caValidity.lowerBound,
            notValidAfter: options.caValidity.upperBound,
            issuer: names.root,
            subject: names.root,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                rootSKI
            },
            issuerPrivateKey: .init(rootKey)
        )

        let intermediatePublicKey = Certificate.PublicKey(intermediateKey.publicKey)
        let intermediateSKI = SubjectKeyIdentifier(hash: intermediatePublicKey)
        let isCA = options.intermediateIsCA
        let intermediateMarker = options.intermediateHasAppleOID
        intermediate = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: intermediatePublicKey,
            notValidBefore: options.caValidity.lowerBound,
            notValidAfter: options.caValidity.upperBound,
            issuer: names.root,
            subject: names.intermediate,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if isCA {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                } else {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                }
                AuthorityKeyIdentifier(keyIdentifier: rootSKI.keyIdentifier)
                intermediateSKI
                if intermediateMarker {
                    Certificate.Extension(oid: Self.intermediateMarkerOID, critical: false, value: markerValue)
                }
            },
            issuerPrivateKey: .init(rootKey)
        )

        let leafMarker = options.leafHasAppleOID
        leaf = try Certificate(
            version: .v3,
            serialNumber: .init(),
            publicKey: .init(leafKey.publicKey),
            notValidBefore: options.leafValidity.lowerBound,
            notValidAfter: options.leafValidity.upperBound,
            issuer: names.intermediate,
            subject: names.leaf,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                BasicConstraints.notCertificateAuthority
                Critical(KeyUsage(digitalSignature: true))
                AuthorityKeyIdentifier(keyIdentifier: intermediateSKI.keyIdentifier)
                if leafMarker {
                    Certificate.Extension(oid: Self.leafMarkerOID, critical: false, value: markerValue)
                }
            },
            issuerPrivateKey: .init(intermediateKey)
        )
    }

    /// The root as DER: what a verifier under test trusts.
    public var rootDER: Data { Self.der(root) }
    /// The intermediate as DER.
    public var intermediateDER: Data { Self.der(intermediate) }
    /// The leaf as DER.
    public var leafDER: Data { Self.der(leaf) }
    /// The root as base64 DER: a value for `APPLE_ROOT_CAS_DER_BASE64`.
    public var rootBase64: String { rootDER.base64EncodedString() }
    /// The `x5c` header value: base64 DER of leaf, intermediate, root (Apple's order).
    public var x5c: [String] { [leafDER, intermediateDER, rootDER].map { $0.base64EncodedString() } }

    /// Writes the root certificate as DER to `url` (for `storeledger verify --root` and dev setups).
    public func writeRootDER(to url: URL) throws {
        try rootDER.write(to: url, options: .atomic)
    }

    /// A signer using this PKI's leaf and chain.
    public func signer(
        bundleID: String = TestSigner.defaultBundleID,
        appAppleID: Int64 = TestSigner.defaultAppAppleID,
        environment: String = "Sandbox"
    ) -> TestSigner {
        TestSigner(pki: self, bundleID: bundleID, appAppleID: appAppleID, environment: environment)
    }

    private static func der(_ certificate: Certificate) -> Data {
        var serializer = DER.Serializer()
        // Serializing a certificate we just built cannot fail.
        try! serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    private static func derNull() throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1Null())
        return serializer.serializedBytes[...]
    }

    private static func subjects(
        _ names: Options.Names
    ) throws -> (root: DistinguishedName, intermediate: DistinguishedName, leaf: DistinguishedName) {
        switch names {
        case .storeLedgerTest:
            return (
                try DistinguishedName {
                    CountryName("US")
                    OrganizationName("StoreLedger Tests")
                    CommonName("StoreLedger Test Root CA")
                },
                try DistinguishedName {
                    CountryName("US")
                    OrganizationName("StoreLedger Tests")
                    CommonName("StoreLedger Test WWDR CA")
                },
                try DistinguishedName {
                    CountryName("US")
                    OrganizationName("StoreLedger Tests")
                    CommonName("StoreLedger Test App Store Signing")
                }
            )
        case .appleLookAlike:
            // Same attribute order as Apple's certificates (CN, OU, O, C), so issuer names match byte for byte.
            return (
                try DistinguishedName {
                    CommonName("Apple Root CA - G3")
                    OrganizationalUnitName("Apple Certification Authority")
                    OrganizationName("Apple Inc.")
                    CountryName("US")
                },
                try DistinguishedName {
                    CommonName("Apple Worldwide Developer Relations Certification Authority")
                    OrganizationalUnitName("G6")
                    OrganizationName("Apple Inc.")
                    CountryName("US")
                },
                try DistinguishedName {
                    CommonName("Prod ECC Mac App Store and iTunes Store Receipt Signing")
                    OrganizationalUnitName("Apple Worldwide Developer Relations")
                    OrganizationName("Apple Inc.")
                    CountryName("US")
                }
            )
        }
    }
}
