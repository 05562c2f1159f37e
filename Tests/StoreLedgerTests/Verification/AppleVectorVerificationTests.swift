import Foundation
import StoreLedgerCore
import StoreLedgerVerification
import Testing

/// Apple's own test vectors, classified the way Apple's libraries classify them.
@Suite("Verification: Apple's test vectors")
struct AppleVectorVerificationTests {
    @Test("testNotification verifies against testCA.der in Sandbox")
    func testNotificationIsValid() async throws {
        let verifier = try AppleVectors.verifier()
        let notification = try await verifier.verifyNotification(AppleVectors.signed("testNotification"))

        #expect(notification.claims.notificationType == "TEST")
        #expect(notification.claims.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.claims.bundleID == "com.example")
        #expect(notification.claims.appAppleID == 1234)
        #expect(notification.claims.environment == .sandbox)
        #expect(notification.claims.signedDate == Date(timeIntervalSince1970: 1_681_314_324))
        #expect(notification.transaction == nil && notification.renewalInfo == nil)
        #expect(!notification.isLocalTestData)
        #expect(JWSSurgery.object(notification.payloadJSON)["notificationType"] as? String == "TEST")
    }

    @Test("testNotification's x5c[2] is not testCA.der, and it is not what makes it verify")
    func headerRootIsNotTrusted() async throws {
        let token = try AppleVectors.signed("testNotification")
        let x5c = try #require(JWSSurgery.header(of: token)["x5c"] as? [String])
        #expect(x5c.count == 3)
        #expect(Data(base64Encoded: x5c[2]) != (try AppleVectors.data("certs/testCA.der")))

        // Trusting only the header's own root (not testCA.der) must not help when it is absent from the config.
        let headerRootOnly = try TrustConfiguration(rootCertificatesDER: [#require(Data(base64Encoded: x5c[2]))])
        let verifier = try AppleVectors.verifier(trust: headerRootOnly)
        // x5c[2] has testCA's key and name, so configuring it explicitly is a legitimate trust decision...
        _ = try await verifier.verifyNotification(token)
        // ...but with G3 configured, x5c[2] sitting in the header is worth nothing.
        let g3 = try AppleVectors.verifier(trust: .appleRootCAG3)
        let error = await #expect(throws: VerificationError.self) { try await g3.verifyNotification(token) }
        #expect(error?.code == .untrustedChain)
    }

    @Test("transactionInfo and renewalInfo verify against testCA.der in Sandbox")
    func transactionAndRenewalInfoAreValid() async throws {
        let verifier = try AppleVectors.verifier()
        let transaction = try await verifier.verifyTransaction(AppleVectors.signed("transactionInfo"))
        #expect(transaction.environment == .sandbox)
        #expect(transaction.signedDate == Date(timeIntervalSince1970: 1_672_956_154))
        #expect(JWSSurgery.object(transaction.payloadJSON)["bundleId"] as? String == "com.example")
        #expect(transaction.signedData == (try AppleVectors.signed("transactionInfo")))

        let renewal = try await verifier.verifyRenewalInfo(AppleVectors.signed("renewalInfo"))
        #expect(renewal.environment == .sandbox)
    }

    @Test("renewal info is checked on environment only (it has no bundle id)")
    func renewalInfoIgnoresApps() async throws {
        let verifier = try AppleVectors.verifier(apps: [AppIdentity(bundleID: "com.other.app")])
        _ = try await verifier.verifyRenewalInfo(AppleVectors.signed("renewalInfo"))
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(AppleVectors.signed("transactionInfo"))
        }
        #expect(error?.code == .wrongApp)
    }

    @Test("wrongBundleId is rejected as wrong app")
    func wrongBundleID() async throws {
        let verifier = try AppleVectors.verifier()
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyNotification(AppleVectors.signed("wrongBundleId"))
        }
        #expect(error?.code == .wrongApp)
        #expect(error?.detail.contains("com.example.wrong") == true)
    }

    @Test("missingX5CHeaderClaim is rejected as malformed")
    func missingX5C() async throws {
        let verifier = try AppleVectors.verifier()
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyNotification(AppleVectors.signed("missingX5CHeaderClaim"))
        }
        #expect(error?.code == .malformed)
        #expect(error?.detail.contains("x5c") == true)
    }

    @Test("testNotification under Production (app Apple id 1234) is the wrong environment")
    func productionRejectsSandbox() async throws {
        let verifier = try AppleVectors.verifier(environment: .production)
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyNotification(AppleVectors.signed("testNotification"))
        }
        #expect(error?.code == .wrongEnvironment)

        let transactionError = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(AppleVectors.signed("transactionInfo"))
        }
        #expect(transactionError?.code == .wrongEnvironment)
    }

    @Test("Sandbox data is judged by Sandbox's rules: a Production-only verifier names its environment, never its appAppleId")
    func sandboxDataIsNotJudgedByProductionRules() async throws {
        let verifier = try AppleVectors.verifier(
            environment: .production,
            apps: [AppIdentity(bundleID: "com.example", appAppleID: 999)]
        )
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyNotification(AppleVectors.signed("testNotification"))
        }
        #expect(error?.code == .wrongEnvironment)
        #expect(error?.detail == "signed for Sandbox, which this deployment does not accept (accepted: Production)")
    }

    @Test("a byte-flipped signature is a bad signature, not a format error")
    func flippedSignature() async throws {
        let verifier = try AppleVectors.verifier()
        for name in ["testNotification", "transactionInfo", "renewalInfo"] {
            let forged = JWSSurgery.flippingSignatureByte(of: try AppleVectors.signed(name))
            let error = await #expect(throws: VerificationError.self) {
                switch name {
                case "testNotification": _ = try await verifier.verifyNotification(forged)
                case "transactionInfo": _ = try await verifier.verifyTransaction(forged)
                default: _ = try await verifier.verifyRenewalInfo(forged)
                }
            }
            #expect(error?.code == .badSignature, "\(name)")
        }
    }

    @Test("with only Apple Root CA - G3 trusted, Apple's test chain is untrusted")
    func g3RejectsTestChain() async throws {
        let verifier = try AppleVectors.verifier(trust: .appleRootCAG3)
        for name in ["testNotification", "wrongBundleId"] {
            let error = await #expect(throws: VerificationError.self) {
                try await verifier.verifyNotification(AppleVectors.signed(name))
            }
            #expect(error?.code == .untrustedChain, "\(name)")
        }
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(AppleVectors.signed("transactionInfo"))
        }
        #expect(error?.code == .untrustedChain)
    }

    @Test("Xcode-signed data is rejected unless explicitly enabled")
    func xcodeDataRejectedByDefault() async throws {
        let verifier = try AppleVectors.verifier(
            apps: [AppIdentity(bundleID: AppleVectors.xcodeBundleID)],
            allowXcode: false
        )
        let error = await #expect(throws: VerificationError.self) {
            try await verifier.verifyTransaction(AppleVectors.xcode("xcode-signed-transaction"))
        }
        #expect(error?.code == .untrustedChain)
        #expect(error?.detail.contains("allowXcodeEnvironment") == true)

        let renewalError = await #expect(throws: VerificationError.self) {
            try await verifier.verifyRenewalInfo(AppleVectors.xcode("xcode-signed-renewal-info"))
        }
        #expect(renewalError?.code == .untrustedChain)
    }

    @Test("Xcode-signed data is accepted when enabled, with fractional signedDate and the bundle still checked")
    func xcodeDataAcceptedWhenEnabled() async throws {
        let verifier = try AppleVectors.verifier(
            apps: [AppIdentity(bundleID: AppleVectors.xcodeBundleID)],
            allowXcode: true
        )
        let transaction = try await verifier.verifyTransaction(AppleVectors.xcode("xcode-signed-transaction"))
        #expect(transaction.isLocalTestData)
        #expect(transaction.environment == .xcode)
        let signedDate = try #require(transaction.signedDate)
        #expect(abs(signedDate.timeIntervalSince1970 - 1_697_679_936.056485) < 0.000_01)

        let renewal = try await verifier.verifyRenewalInfo(AppleVectors.xcode("xcode-signed-renewal-info"))
        #expect(renewal.isLocalTestData)

        let otherApp = try AppleVectors.verifier(allowXcode: true)
        let error = await #expect(throws: VerificationError.self) {
            try await otherApp.verifyTransaction(AppleVectors.xcode("xcode-signed-transaction"))
        }
        #expect(error?.code == .wrongApp)
    }
}
