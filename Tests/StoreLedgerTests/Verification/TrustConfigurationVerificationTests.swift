import Crypto
import Foundation
import StoreLedgerCore
import StoreLedgerVerification
import Testing

/// The embedded Apple root, `APPLE_ROOT_CAS_DER_BASE64` parsing and configuration validation.
@Suite("Verification: trust configuration")
struct TrustConfigurationVerificationTests {
    /// Apple Root CA - G3's published SHA-256 fingerprint.
    static let pinnedG3SHA256 =
        "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"

    @Test("the embedded Apple Root CA - G3 has the pinned SHA-256 and equals Apple's file")
    func g3IsPinned() throws {
        let digest = SHA256.hash(data: TrustConfiguration.appleRootCAG3DER)
        let hex = digest.map { String(format: "%02X", $0) }.joined(separator: ":")
        #expect(hex == Self.pinnedG3SHA256)
        #expect(TrustConfiguration.appleRootCAG3DER == (try AppleVectors.data("certs/AppleRootCA-G3.der")))
        #expect(TrustConfiguration.appleRootCAG3.rootFingerprintsSHA256 == [Self.pinnedG3SHA256])
        #expect(TrustConfiguration.appleRootCAG3SHA256 == Self.pinnedG3SHA256)
        #expect(TrustConfiguration.appleRootCAG3.rootSubjects.first?.contains("Apple Root CA - G3") == true)
    }

    @Test("APPLE_ROOT_CAS_DER_BASE64 parses comma-separated base64 DER, whitespace tolerated")
    func parsesBase64List() throws {
        let testCA = try AppleVectors.data("certs/testCA.der").base64EncodedString()
        let g3 = TrustConfiguration.appleRootCAG3Base64
        let trust = try TrustConfiguration.parse(base64DERList: " \(testCA) ,\n\(g3),")
        #expect(trust.rootCertificatesDER.count == 2)
        #expect(trust.rootCertificatesDER[1] == TrustConfiguration.appleRootCAG3DER)
        #expect(try TrustConfiguration.fromConfigurationValue(testCA).rootCertificatesDER.count == 1)
    }

    @Test("an absent or blank value means Apple Root CA - G3")
    func defaultsToG3() throws {
        #expect(try TrustConfiguration.fromConfigurationValue(nil) == .appleRootCAG3)
        #expect(try TrustConfiguration.fromConfigurationValue("  \n") == .appleRootCAG3)
    }

    @Test(
        "bad values are invalid configuration with the entry named",
        arguments: [
            ("not base64!", "#1"),
            ("\(Data("hello".utf8).base64EncodedString())", "#1"),
            (",,", "no certificate"),
        ]
    )
    func rejectsBadValues(value: String, mention: String) {
        let error = #expect(throws: VerificationError.self) { try TrustConfiguration.parse(base64DERList: value) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.detail.contains(mention) == true, "\(error?.detail ?? "")")
        #expect(error?.detail.contains(TrustConfiguration.rootsConfigurationKey) == true)
    }

    @Test("an empty root list is invalid")
    func rejectsNoRoots() {
        let error = #expect(throws: VerificationError.self) { try TrustConfiguration(rootCertificatesDER: []) }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test("Production needs every app's Apple id; Xcode is not a configurable environment; apps are required")
    func validatesVerifierConfiguration() throws {
        let cases: [VerifierConfiguration] = [
            VerifierConfiguration(apps: [AppIdentity(bundleID: "com.example")], environment: .production),
            VerifierConfiguration(apps: [AppIdentity(bundleID: "com.example")], environment: .xcode),
            VerifierConfiguration(apps: [], environment: .sandbox),
        ]
        for configuration in cases {
            let error = #expect(throws: VerificationError.self) {
                try SignedDataVerifier(configuration: configuration)
            }
            #expect(error?.code == .invalidConfiguration)
        }
        _ = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: "com.example", appAppleID: 1)],
                environment: .production
            )
        )
        _ = try SignedDataVerifier(
            configuration: VerifierConfiguration(apps: [AppIdentity(bundleID: "com.example")], environment: .sandbox)
        )
    }

    @Test("error codes are distinct and describe themselves")
    func errorCodes() {
        let codes: [VerificationError.Code] = [
            .malformed, .badSignature, .untrustedChain, .wrongApp, .wrongEnvironment, .retryable,
            .invalidConfiguration,
        ]
        #expect(Set(codes).count == codes.count)
        let error = VerificationError(.retryable, "OCSP responder unreachable")
        #expect(error.isRetryable)
        #expect(error.description == "retryable: OCSP responder unreachable")
        #expect(!VerificationError(.badSignature, "x").isRetryable)
    }
}
