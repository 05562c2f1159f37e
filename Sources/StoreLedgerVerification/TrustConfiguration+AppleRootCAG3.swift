package import Foundation

extension TrustConfiguration {
    /// Apple Root CA - G3 (DER, base64), from https://www.apple.com/certificateauthority/AppleRootCA-G3.cer.
    ///
    /// Subject `CN=Apple Root CA - G3, OU=Apple Certification Authority, O=Apple Inc., C=US`, valid 2014-04-30 to
    /// 2039-04-30, SHA-256 ``appleRootCAG3SHA256`` (pinned by a test).
    package static let appleRootCAG3Base64 = """
        MIICQzCCAcmgAwIBAgIILcX8iNLFS5UwCgYIKoZIzj0EAwMwZzEbMBkGA1UEAwwSQXBwbGUgUm9vdCBDQSAtIEczMSYwJAYDVQQL\
        DB1BcHBsZSBDZXJ0aWZpY2F0aW9uIEF1dGhvcml0eTETMBEGA1UECgwKQXBwbGUgSW5jLjELMAkGA1UEBhMCVVMwHhcNMTQwNDMw\
        MTgxOTA2WhcNMzkwNDMwMTgxOTA2WjBnMRswGQYDVQQDDBJBcHBsZSBSb290IENBIC0gRzMxJjAkBgNVBAsMHUFwcGxlIENlcnRp\
        ZmljYXRpb24gQXV0aG9yaXR5MRMwEQYDVQQKDApBcHBsZSBJbmMuMQswCQYDVQQGEwJVUzB2MBAGByqGSM49AgEGBSuBBAAiA2IA\
        BJjpLz1AcqTtkyJygRMc3RCV8cWjTnHcFBbZDuWmBSp3ZHtfTjjTuxxEtX/1H7YyYl3J6YRbTzBPEVoA/VhYDKX1DyxNB0cTddqX\
        l5dvMVztK517IDvYuVTZXpmkOlEKMaNCMEAwHQYDVR0OBBYEFLuw3qFYM4iapIqZ3r6966/ayySrMA8GA1UdEwEB/wQFMAMBAf8w\
        DgYDVR0PAQH/BAQDAgEGMAoGCCqGSM49BAMDA2gAMGUCMQCD6cHEFl4aXTQY2e3v9GwOAEZLuN+yRhHFD/3meoyhpmvOwgPUnPWT\
        xnS4at+qIxUCMG1mihDK1A3UT82NQz60imOlM27jbdoXt2QfyFMm+YhidDkLF1vLUagM6BgD56KyKA==
        """

    /// Apple Root CA - G3 as DER bytes.
    package static let appleRootCAG3DER = Data(base64Encoded: appleRootCAG3Base64)!

    /// Apple Root CA - G3's SHA-256 fingerprint, upper-case hex pairs joined by colons.
    package static let appleRootCAG3SHA256 =
        "63:34:3A:BF:B8:9A:6A:03:EB:B5:7E:9B:3F:5F:A7:BE:7C:4F:5C:75:6F:30:17:B3:A8:C4:88:C3:65:3E:91:79"

    /// The default trust: Apple Root CA - G3 only, the root of every App Store signing chain.
    package static let appleRootCAG3: TrustConfiguration = {
        do {
            return try TrustConfiguration(rootCertificatesDER: [appleRootCAG3DER])
        } catch {
            fatalError("embedded Apple Root CA - G3 does not parse: \(error)")
        }
    }()
}
