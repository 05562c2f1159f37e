import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerVerification

/// Shared helpers of the simulation suites: temporary CA folders and verifiers trusting a CA.
enum SimulationFixtures {
    /// The bundle id the simulation tests sign for.
    static let bundleID = "com.example.storeledger"
    /// The app Apple id the simulation tests sign for.
    static let appAppleID: Int64 = 1_234_567_890

    /// A fresh folder path under the temporary directory (not created).
    static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("storeledger-sim-\(UUID().uuidString)", isDirectory: true)
    }

    /// Runs `body` with a development CA in a fresh temporary folder, removed afterwards.
    static func withCertificateAuthority<T>(_ body: (DevelopmentCertificateAuthority) async throws -> T) async throws -> T {
        let folder = temporaryFolder().appendingPathComponent("dev-ca", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        return try await body(try DevelopmentCertificateAuthority.loadOrCreate(at: folder))
    }

    /// A verifier for the test app trusting `rootDER` (default trust, Apple Root CA - G3, when `nil`).
    static func verifier(trusting rootDER: Data?, environment: AppStoreEnvironment = .sandbox) throws -> SignedDataVerifier {
        let trust =
            try rootDER.map { try TrustConfiguration(rootCertificatesDER: [$0]) }
            ?? TrustConfiguration.fromConfigurationValue(nil)
        return try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: bundleID, appAppleID: appAppleID)],
                environment: environment,
                trust: trust
            )
        )
    }
}
