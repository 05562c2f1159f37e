import Crypto
package import Foundation
import SwiftASN1
import X509

/// The root certificates a verifier trusts: an `x5c` chain must end in one of them.
///
/// The default is ``appleRootCAG3``. Configuration key `APPLE_ROOT_CAS_DER_BASE64` (comma-separated base64 DER
/// certificates) replaces it; parse its value with ``parse(base64DERList:)`` or ``fromConfigurationValue(_:)``.
/// The certificates in a JWS's own `x5c` header are never trusted because of where they appear.
package struct TrustConfiguration: Hashable, Sendable {
    /// The configuration key whose value replaces the default roots.
    package static let rootsConfigurationKey = "APPLE_ROOT_CAS_DER_BASE64"

    /// The trusted roots, DER-encoded, in configuration order.
    package let rootCertificatesDER: [Data]
    /// The trusted roots, parsed.
    let rootCertificates: [Certificate]

    /// Trusts exactly the given DER-encoded root certificates.
    ///
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` when the list is empty or an entry is not an
    ///   X.509 certificate.
    package init(rootCertificatesDER: [Data]) throws(VerificationError) {
        guard !rootCertificatesDER.isEmpty else {
            throw .invalidConfiguration("no trusted root certificates configured")
        }
        var parsed: [Certificate] = []
        for (index, der) in rootCertificatesDER.enumerated() {
            do {
                parsed.append(try Certificate(derEncoded: Array(der)))
            } catch {
                throw .invalidConfiguration("root certificate #\(index + 1) is not a DER X.509 certificate: \(error)")
            }
        }
        self.rootCertificatesDER = rootCertificatesDER
        self.rootCertificates = parsed
    }

    /// Parses a comma-separated list of base64 DER certificates (the `APPLE_ROOT_CAS_DER_BASE64` format).
    ///
    /// Whitespace and newlines around and inside entries are ignored; empty entries (a trailing comma) are skipped.
    /// - Throws: ``VerificationError/Code/invalidConfiguration`` naming the offending entry.
    package static func parse(base64DERList value: String) throws(VerificationError) -> TrustConfiguration {
        let entries = value.split(separator: ",").map { entry in
            String(entry.filter { !$0.isWhitespace })
        }.filter { !$0.isEmpty }
        guard !entries.isEmpty else {
            throw .invalidConfiguration("\(rootsConfigurationKey) holds no certificate")
        }
        var ders: [Data] = []
        for (index, entry) in entries.enumerated() {
            guard let der = Data(base64Encoded: entry) else {
                throw .invalidConfiguration("\(rootsConfigurationKey) entry #\(index + 1) is not valid base64")
            }
            ders.append(der)
        }
        do {
            return try TrustConfiguration(rootCertificatesDER: ders)
        } catch {
            throw error.prefixed(rootsConfigurationKey)
        }
    }

    /// The trust for an optional configuration value: Apple Root CA - G3 when it is absent or blank, else the
    /// parsed list.
    package static func fromConfigurationValue(_ value: String?) throws(VerificationError) -> TrustConfiguration {
        guard let value, !value.allSatisfy(\.isWhitespace) else {
            return .appleRootCAG3
        }
        return try parse(base64DERList: value)
    }

    /// SHA-256 fingerprints of the trusted roots (`AB:CD:…`), for logs and `--help` output.
    package var rootFingerprintsSHA256: [String] {
        rootCertificatesDER.map(Self.fingerprint(of:))
    }

    /// The subjects of the trusted roots, for logs.
    package var rootSubjects: [String] {
        rootCertificates.map { String(describing: $0.subject) }
    }

    /// The SHA-256 fingerprint of DER bytes as upper-case hex pairs joined by colons.
    package static func fingerprint(of der: Data) -> String {
        SHA256.hash(data: der).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return hex.count == 1 ? "0" + hex : hex
        }.joined(separator: ":")
    }

    /// Two configurations are equal when they trust the same DER bytes in the same order.
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.rootCertificatesDER == rhs.rootCertificatesDER
    }

    /// Hashes the DER bytes.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(rootCertificatesDER)
    }
}
