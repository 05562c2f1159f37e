import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// The (leaf, intermediate) cache: fewer chain validations, never a weaker answer.
@Suite("Verification: chain cache")
struct ChainCacheVerificationTests {
    /// A Sandbox verifier trusting the roots of `pkis`, with a cache of `capacity`.
    func verifier(
        trusting pkis: [TestPKI], capacity: Int = VerifierConfiguration.defaultChainCacheCapacity
    ) throws
        -> SignedDataVerifier
    {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID)],
                environment: .sandbox,
                trust: TrustConfiguration(rootCertificatesDER: pkis.map(\.rootDER)),
                chainCacheCapacity: capacity
            )
        )
    }

    @Test("a second JWS from the same chain does not validate the chain again")
    func secondVerificationHitsTheCache() async throws {
        let pki = try TestPKI()
        let verifier = try verifier(trusting: [pki])
        let signer = pki.signer()

        _ = try await verifier.verifyTransaction(signer.signedTransaction())
        #expect(verifier.chainCacheStatistics.chainValidations == 1)
        #expect(verifier.chainCacheStatistics.hits == 0)

        _ = try await verifier.verifyTransaction(
            signer.signedTransaction(signer.transactionPayload(transactionID: "2"))
        )
        _ = try await verifier.verifyRenewalInfo(signer.signedRenewalInfo())
        let statistics = verifier.chainCacheStatistics
        #expect(statistics.chainValidations == 1)
        #expect(statistics.hits == 2)
        #expect(statistics.entries == 1)
    }

    @Test("a notification with two nested JWS costs one chain validation")
    func notificationWithNestedJWS() async throws {
        let pki = try TestPKI()
        let signer = pki.signer()
        let verifier = try verifier(trusting: [pki])
        _ = try await verifier.verifyNotification(
            signer.signedNotification(
                type: "DID_RENEW",
                transaction: signer.transactionPayload(),
                renewalInfo: signer.renewalInfoPayload()
            )
        )
        #expect(verifier.chainCacheStatistics.chainValidations == 1)
        #expect(verifier.chainCacheStatistics.hits == 2)
    }

    @Test("a leaf expired at signedDate is rejected even though its chain is cached")
    func expiredLeafOnCacheHit() async throws {
        let leafValidity = Date(timeIntervalSince1970: 1_704_067_200)...Date(timeIntervalSince1970: 1_719_792_000)
        let pki = try TestPKI(.leafValid(leafValidity))
        let signer = pki.signer()
        let verifier = try verifier(trusting: [pki])
        func transaction(signedAt seconds: TimeInterval) throws -> String {
            try signer.signedTransaction(signer.transactionPayload(signedDate: Date(timeIntervalSince1970: seconds)))
        }

        _ = try await verifier.verifyTransaction(transaction(signedAt: 1_710_000_000))
        _ = try await verifier.verifyTransaction(transaction(signedAt: 1_711_000_000))
        #expect(verifier.chainCacheStatistics.chainValidations == 1)
        #expect(verifier.chainCacheStatistics.hits == 1)

        for late in [1_735_689_600.0, 1_719_792_001] {
            let error = await #expect(throws: VerificationError.self) {
                try await verifier.verifyTransaction(transaction(signedAt: late))
            }
            #expect(error?.code == .untrustedChain)
        }
        let early = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(transaction(signedAt: 1_704_067_199))
        }
        #expect(early?.code == .untrustedChain)
        #expect(verifier.chainCacheStatistics.hits == 1)

        // The cached pair still serves dates inside its window.
        _ = try await verifier.verifyTransaction(transaction(signedAt: 1_712_000_000))
        #expect(verifier.chainCacheStatistics.hits == 2)
    }

    @Test("a cached chain does not excuse a bad signature")
    func badSignatureOnCacheHit() async throws {
        let pki = try TestPKI()
        let signer = pki.signer()
        let verifier = try verifier(trusting: [pki])
        _ = try await verifier.verifyTransaction(signer.signedTransaction())
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(signer.signedTransaction(variant: .tamperedPayload))
        }
        #expect(error?.code == .badSignature)
        #expect(verifier.chainCacheStatistics.hits == 1)
    }

    @Test("a cached chain does not excuse an unreadable x5c entry, even the root entry nothing chains through")
    func unreadableRootEntryOnCacheHit() async throws {
        let pki = try TestPKI()
        let signer = pki.signer()
        let verifier = try verifier(trusting: [pki])
        let token = try signer.signedTransaction()
        _ = try await verifier.verifyTransaction(token)

        var header = JWSSurgery.header(of: token)
        var x5c = try #require(header["x5c"] as? [String])
        for garbage in ["not base64!", Data("not DER".utf8).base64EncodedString()] {
            x5c[2] = garbage
            header["x5c"] = x5c
            let error = await #expect(throws: VerificationError.self) {
                try await verifier.verifyTransaction(JWSSurgery.replacingHeader(of: token, with: header))
            }
            #expect(error?.code == .malformed)
        }
        #expect(verifier.chainCacheStatistics.hits == 0)
    }

    @Test("the cache is bounded, and capacity 0 disables it")
    func bounded() async throws {
        let pkis = try (0..<3).map { _ in try TestPKI() }
        let small = try verifier(trusting: pkis, capacity: 2)
        for pki in pkis {
            _ = try await small.verifyTransaction(pki.signer().signedTransaction())
        }
        #expect(small.chainCacheStatistics.entries == 2)
        #expect(small.chainCacheStatistics.capacity == 2)
        // The oldest pair was evicted: verifying it again validates its chain again.
        _ = try await small.verifyTransaction(pkis[0].signer().signedTransaction())
        #expect(small.chainCacheStatistics.chainValidations == 4)

        let none = try verifier(trusting: pkis, capacity: 0)
        for _ in 0..<3 {
            _ = try await none.verifyTransaction(pkis[1].signer().signedTransaction())
        }
        #expect(none.chainCacheStatistics.chainValidations == 3)
        #expect(none.chainCacheStatistics.entries == 0)
    }

    @Test("one verifier is safe to use from many tasks at once")
    func concurrentUse() async throws {
        let pkis = try (0..<4).map { _ in try TestPKI() }
        let verifier = try verifier(trusting: pkis)
        let tokens = try (0..<64).map { index in
            try pkis[index % pkis.count].signer().signedTransaction(
                pkis[index % pkis.count].signer().transactionPayload(transactionID: "\(index)")
            )
        }
        let verified = try await withThrowingTaskGroup(of: String?.self) { group in
            for token in tokens {
                group.addTask {
                    let result = try await verifier.verifyTransaction(token)
                    return JWSSurgery.object(result.payloadJSON)["transactionId"] as? String
                }
            }
            var ids: Set<String> = []
            for try await id in group {
                if let id { ids.insert(id) }
            }
            return ids
        }
        #expect(verified.count == 64)
        let statistics = verifier.chainCacheStatistics
        #expect(statistics.hits + statistics.chainValidations == 64)
        #expect(statistics.entries == 4)
        #expect(statistics.chainValidations >= 4)
    }
}
