import Foundation
import StoreLedgerCore
import StoreLedgerVerification
import Testing

/// Apple's real production chain (no JWS): the chain and OID policy on genuine Apple certificates.
@Suite("Verification: Apple's production chain")
struct AppleProductionChainVerificationTests {
    /// 2025-11-01, when the receipt-signing leaf is valid.
    static let validationDate = Date(timeIntervalSince1970: 1_761_962_975)

    /// A Production verifier trusting `trust` (default: Apple Root CA - G3).
    func verifier(trust: TrustConfiguration = .appleRootCAG3) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: "com.example", appAppleID: 1)],
                environment: .production,
                trust: trust
            )
        )
    }

    @Test("AppleReceiptSigning-2025 → WWDR G6 → Apple Root CA - G3 validates with Apple's OIDs")
    func productionChainValidates() async throws {
        try await verifier().validateCertificateChain(
            leafDER: AppleVectors.data("certs/AppleReceiptSigning-2025.der"),
            intermediateDER: AppleVectors.data("certs/AppleWWDRCA-G6.der"),
            at: Self.validationDate
        )
    }

    @Test("the production chain is untrusted before the leaf's notBefore and under another root")
    func productionChainFailures() async throws {
        let leaf = try AppleVectors.data("certs/AppleReceiptSigning-2025.der")
        let intermediate = try AppleVectors.data("certs/AppleWWDRCA-G6.der")
        let early = try verifier()
        let error = await #expect(throws: VerificationError.self) {
            try await early.validateCertificateChain(
                leafDER: leaf,
                intermediateDER: intermediate,
                at: Date(timeIntervalSince1970: 1_700_000_000)
            )
        }
        #expect(error?.code == .untrustedChain)

        let testCAOnly = try verifier(trust: AppleVectors.testCATrust())
        let otherRoot = await #expect(throws: VerificationError.self) {
            try await testCAOnly.validateCertificateChain(
                leafDER: leaf,
                intermediateDER: intermediate,
                at: Self.validationDate
            )
        }
        #expect(otherRoot?.code == .untrustedChain)
    }

    @Test("swapping leaf and intermediate breaks the policy")
    func swappedChainIsRejected() async throws {
        let error = await #expect(throws: VerificationError.self) {
            try await verifier().validateCertificateChain(
                leafDER: AppleVectors.data("certs/AppleWWDRCA-G6.der"),
                intermediateDER: AppleVectors.data("certs/AppleReceiptSigning-2025.der"),
                at: Self.validationDate
            )
        }
        #expect(error?.code == .untrustedChain)
    }
}
