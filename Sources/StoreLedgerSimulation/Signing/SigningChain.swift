package import Crypto
package import Foundation
package import SwiftASN1
package import X509

/// An App Store-like certificate chain on P-256 keys: a self-signed root CA, an Apple-like intermediate CA
/// (WWDR marker `1.2.840.113635.100.6.2.1`) and a signing leaf (App Store marker `1.2.840.113635.100.6.11.1`).
///
/// The one place StoreLedger mints such chains: the development CA (``DevelopmentCertificateAuthority``) persists
/// one, the test PKI mints a fresh one per instance, and ``AppStoreJWSSigner`` signs with either.
package struct SigningChain: Sendable {
    /// Apple's App Store signing leaf marker, `1.2.840.113635.100.6.11.1`.
    package static let leafMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 11, 1]
    /// Apple's WWDR intermediate marker, `1.2.840.113635.100.6.2.1`.
    package static let intermediateMarkerOID: ASN1ObjectIdentifier = [1, 2, 840, 113635, 100, 6, 2, 1]

    /// The root's private key.
    package let rootKey: P256.Signing.PrivateKey
    /// The intermediate's private key.
    package let intermediateKey: P256.Signing.PrivateKey
    /// The leaf's private key: it signs every JWS.
    package let leafKey: P256.Signing.PrivateKey
    /// The self-signed root.
    package let root: Certificate
    /// The intermediate, issued by the root.
    package let intermediate: Certificate
    /// The leaf, issued by the intermediate.
    package let leaf: Certificate

    /// Mints a new chain on fresh random keys.
    package init(_ options: Options = Options()) throws {
        let rootKey = P256.Signing.PrivateKey()
        let intermediateKey = P256.Signing.PrivateKey()
        let leafKey = P256.Signing.PrivateKey()
        let names = options.names
        let markerValue = try Self.derNull()

        let rootPublicKey = Certificate.PublicKey(rootKey.publicKey)
        let rootSKI = SubjectKeyIdentifier(hash: rootPublicKey)
        let root = try Certificate(
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
        let intermediate = try Certificate(
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
        let leaf = try Certificate(
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
        try self.init(
            rootKey: rootKey, intermediateKey: intermediateKey, leafKey: leafKey,
            root: root, intermediate: intermediate, leaf: leaf
        )
    }

    /// Assembles a chain from existing keys and certificates (e.g. loaded from disk), checking that each key
    /// belongs to its certificate and that each certificate is signed by its issuer.
    package init(
        rootKey: P256.Signing.PrivateKey,
        intermediateKey: P256.Signing.PrivateKey,
        leafKey: P256.Signing.PrivateKey,
        root: Certificate,
        intermediate: Certificate,
        leaf: Certificate
    ) throws(SimulationError) {
        let pairs: [(String, P256.Signing.PrivateKey, Certificate)] = [
            ("root", rootKey, root), ("intermediate", intermediateKey, intermediate), ("leaf", leafKey, leaf),
        ]
        for (role, key, certificate) in pairs where certificate.publicKey != Certificate.PublicKey(key.publicKey) {
            throw SimulationError(.invalidCertificateAuthority, "the \(role) key does not match the \(role) certificate")
        }
        let issued: [(String, Certificate, Certificate)] = [
            ("root", root, root), ("intermediate", intermediate, root), ("leaf", leaf, intermediate),
        ]
        for (role, certificate, issuer) in issued {
            guard certificate.issuer == issuer.subject,
                issuer.publicKey.isValidSignature(certificate.signature, for: certificate)
            else {
                throw SimulationError(.invalidCertificateAuthority, "the \(role) certificate is not signed by its issuer")
            }
        }
        self.rootKey = rootKey
        self.intermediateKey = intermediateKey
        self.leafKey = leafKey
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
    }

    /// The root as DER: what a verifier trusts.
    package var rootDER: Data { Self.der(root) }
    /// The intermediate as DER.
    package var intermediateDER: Data { Self.der(intermediate) }
    /// The leaf as DER.
    package var leafDER: Data { Self.der(leaf) }
    /// The root as base64 DER: a value for `APPLE_ROOT_CAS_DER_BASE64`.
    package var rootBase64: String { rootDER.base64EncodedString() }
    /// The `x5c` header value: base64 DER of leaf, intermediate, root (Apple's order).
    package var x5c: [String] { [leafDER, intermediateDER, rootDER].map { $0.base64EncodedString() } }

    /// A certificate as DER.
    static func der(_ certificate: Certificate) -> Data {
        var serializer = DER.Serializer()
        // Serializing a parsed or freshly built certificate cannot fail.
        try! serializer.serialize(certificate)
        return Data(serializer.serializedBytes)
    }

    /// The DER encoding of ASN.1 NULL: the value of Apple's marker extensions.
    private static func derNull() throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try serializer.serialize(ASN1Null())
        return serializer.serializedBytes[...]
    }
}
