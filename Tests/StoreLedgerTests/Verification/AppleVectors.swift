import Foundation
import StoreLedgerCore
import StoreLedgerVerification

/// Apple's test vectors in `Fixtures/apple` and verifiers configured the way Apple's own tests use them.
enum AppleVectors {
    /// The bundle id of Apple's mock data.
    static let bundleID = "com.example"
    /// The app Apple id of Apple's mock notification.
    static let appAppleID: Int64 = 1234
    /// The bundle id of the Xcode-signed transaction.
    static let xcodeBundleID = "com.example.naturelab.backyardbirds.example"

    /// The URL of a fixture under `Fixtures/apple`.
    static func url(_ path: String) -> URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures/apple/\(path)")
    }

    /// The bytes of a fixture under `Fixtures/apple`.
    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: url(path))
    }

    /// A mock JWS from `mock_signed_data`, trimmed.
    static func signed(_ name: String) throws -> String {
        try String(decoding: data("mock_signed_data/\(name)"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// An Xcode-signed JWS from `xcode`, trimmed.
    static func xcode(_ name: String) throws -> String {
        try String(decoding: data("xcode/\(name)"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Trust in Apple's test root only.
    static func testCATrust() throws -> TrustConfiguration {
        try TrustConfiguration(rootCertificatesDER: [data("certs/testCA.der")])
    }

    /// A verifier for `com.example` (app Apple id 1234) in `environment`, trusting `trust` (default testCA.der).
    static func verifier(
        environment: AppStoreEnvironment = .sandbox,
        trust: TrustConfiguration? = nil,
        apps: [AppIdentity] = [AppIdentity(bundleID: bundleID, appAppleID: appAppleID)],
        allowXcode: Bool = false
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: apps,
                environment: environment,
                trust: trust ?? testCATrust(),
                allowXcodeEnvironment: allowXcode
            )
        )
    }
}
