import Crypto
import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// Data signed by the test PKI: genuine data verifies, every forgery is rejected with the right code.
@Suite("Verification: test PKI and forgeries")
struct TestPKIVerificationTests {
    /// One genuine PKI shared by the suite (fresh keys per test run).
    static let pki = try! TestPKI()
    /// 2025-01-01, inside the default validity.
    static let signedDate = Date(timeIntervalSince1970: 1_735_689_600)

    /// A Sandbox verifier for the signer's default app, trusting `trusted` (default: the shared PKI's root).
    func verifier(
        trusting trusted: TestPKI = Self.pki, environment: AppStoreEnvironment = .sandbox
    ) throws
        -> SignedDataVerifier
    {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)],
                environment: environment,
                trust: TrustConfiguration(rootCertificatesDER: [trusted.rootDER])
            )
        )
    }

    /// The code a rejected notification fails with.
    func rejection(_ token: String, by verifier: SignedDataVerifier) async -> VerificationError? {
        await #expect(throws: VerificationError.self) { try await verifier.verifyNotification(token) }
    }

    @Test("a genuine notification verifies with its nested transaction and renewal info")
    func genuineNotification() async throws {
        let signer = Self.pki.signer()
        let uuid = UUID()
        let token = try signer.signedNotification(
            type: "SUBSCRIBED",
            subtype: "INITIAL_BUY",
            notificationUUID: uuid,
            signedDate: Self.signedDate,
            transaction: signer.transactionPayload(transactionID: "42"),
            renewalInfo: signer.renewalInfoPayload(originalTransactionID: "42"),
            status: 1
        )
        let notification = try await verifier().verifyNotification(token)
        #expect(notification.claims.notificationType == "SUBSCRIBED")
        #expect(notification.claims.subtype == "INITIAL_BUY")
        #expect(notification.claims.notificationUUID == uuid.uuidString.lowercased())
        #expect(notification.claims.signedDate == Self.signedDate)
        // Sandbox notifications carry no appAppleId, as Apple sends them.
        #expect(notification.claims.appAppleID == nil)
        #expect(notification.claims.environment == .sandbox)
        let transaction = try #require(notification.transaction)
        #expect(JWSSurgery.object(transaction.payloadJSON)["transactionId"] as? String == "42")
        let renewal = try #require(notification.renewalInfo)
        #expect(JWSSurgery.object(renewal.payloadJSON)["originalTransactionId"] as? String == "42")
        #expect(notification.signedPayload == token)
    }

    /// A genuine notification of a shape this version does not know (none of the sections that name its app) is
    /// refused as such — malformed, naming its type — not as the wrong app, and a notification with an empty `data`
    /// still reads as missing its bundleId.
    @Test func aGenuineNotificationOfAnUnknownShapeIsSaidToBeOne() async throws {
        let signer = Self.pki.signer()
        let unknown = try signer.sign(json: [
            "notificationType": "SOMETHING_NEW", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Self.signedDate.timeIntervalSince1970 * 1000, "subscriptionSummary": ["bundleId": TestSigner.defaultBundleID],
        ])
        let error = await rejection(unknown, by: try verifier())
        #expect(error?.code == .malformed, "\(String(describing: error))")
        #expect(error?.detail.contains("SOMETHING_NEW") == true, "\(String(describing: error))")
        let emptyData = try signer.sign(json: [
            "notificationType": "SUBSCRIBED", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Self.signedDate.timeIntervalSince1970 * 1000, "data": ["environment": "Sandbox"],
        ])
        #expect(await rejection(emptyData, by: try verifier())?.code == .wrongApp)
    }

    @Test("standalone transactions, renewal infos and app transactions verify")
    func standaloneData() async throws {
        let signer = Self.pki.signer()
        let verifier = try verifier()
        _ = try await verifier.verifyTransaction(signer.signedTransaction())
        _ = try await verifier.verifyRenewalInfo(signer.signedRenewalInfo())
        let appTransaction = try signer.sign(json: [
            "receiptType": "Sandbox", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
            "originalApplicationVersion": "1.0", "signedDate": 1_735_689_600_000,
        ])
        let verified = try await verifier.verifyAppTransaction(appTransaction)
        #expect(verified.environment == .sandbox)
    }

    @Test("Apple's names on other keys: rejected under Apple Root CA - G3")
    func lookAlikeChain() async throws {
        let lookAlike = try TestPKI(.appleLookAlike)
        let token = try lookAlike.signer().signedNotification(type: "TEST", signedDate: Self.signedDate)
        let g3 = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID)],
                environment: .sandbox
            )
        )
        let error = await rejection(token, by: g3)
        #expect(error?.code == .untrustedChain)
        // The same chain is fine once its own root is (deliberately) trusted: only the trust decision differs.
        _ = try await verifier(trusting: lookAlike).verifyNotification(token)
    }

    @Test(
        "chains without Apple's markers or with a non-CA intermediate are untrusted",
        arguments: [
            ("leaf without OID", TestPKI.Options.leafWithoutAppleOID, "1.2.840.113635.100.6.11.1"),
            ("intermediate without OID", TestPKI.Options.intermediateWithoutAppleOID, "1.2.840.113635.100.6.2.1"),
            ("intermediate not a CA", TestPKI.Options.intermediateNotCA, "CA"),
        ]
    )
    func policyViolations(name: String, options: TestPKI.Options, mention: String) async throws {
        let pki = try TestPKI(options)
        let token = try pki.signer().signedNotification(type: "TEST", signedDate: Self.signedDate)
        let error = await rejection(token, by: try verifier(trusting: pki))
        #expect(error?.code == .untrustedChain, "\(name)")
        #expect(error?.detail.contains(mention) == true, "\(name): \(error?.detail ?? "")")
    }

    @Test(
        "header forgeries are malformed",
        arguments: [
            ("alg none", JWSVariant.algNone),
            ("HS256 keyed with the leaf's public key", JWSVariant.hs256(key: pki.leafKey.publicKey.derRepresentation)),
            ("2-certificate x5c", JWSVariant.twoCertificateChain),
            ("no x5c", JWSVariant.missingX5C),
            ("x5c entry not DER", JWSVariant.customX5C(["AAAA", "AAAA", "AAAA"])),
        ]
    )
    func malformedVariants(name: String, variant: JWSVariant) async throws {
        let token = try Self.pki.signer().signedNotification(
            type: "TEST",
            signedDate: Self.signedDate,
            variant: variant
        )
        let error = await rejection(token, by: try verifier())
        #expect(error?.code == .malformed, "\(name): \(error?.description ?? "accepted")")
    }

    @Test(
        "signature forgeries are bad signatures",
        arguments: [
            ("tampered payload", JWSVariant.tamperedPayload),
            ("flipped signature byte", JWSVariant.flippedSignatureByte),
            ("genuine x5c, other key", JWSVariant.signedWithKey(P256.Signing.PrivateKey())),
        ]
    )
    func signatureVariants(name: String, variant: JWSVariant) async throws {
        let token = try Self.pki.signer().signedNotification(
            type: "TEST",
            signedDate: Self.signedDate,
            variant: variant
        )
        let error = await rejection(token, by: try verifier())
        #expect(error?.code == .badSignature, "\(name): \(error?.description ?? "accepted")")
    }

    @Test("a leaf expired at signedDate is untrusted (and valid before it expired)")
    func expiredLeaf() async throws {
        let pki = try TestPKI(
            .leafValid(Date(timeIntervalSince1970: 1_704_067_200)...Date(timeIntervalSince1970: 1_719_792_000))
        )
        let verifier = try verifier(trusting: pki)
        let expired = try pki.signer().signedTransaction(pki.signer().transactionPayload(signedDate: Self.signedDate))
        let error = await #expect(throws: VerificationError.self) { try await verifier.verifyTransaction(expired) }
        #expect(error?.code == .untrustedChain)

        let inTime = try pki.signer().signedTransaction(
            pki.signer().transactionPayload(signedDate: Date(timeIntervalSince1970: 1_710_000_000))
        )
        _ = try await verifier.verifyTransaction(inTime)
    }

    /// An app transaction carries no signedDate: Apple documents receiptCreationDate as the date it signed it, and its
    /// libraries check the chain then, so one signed while the leaf was valid still verifies after the leaf expired.
    @Test("an app transaction's chain is checked at its receiptCreationDate, the date Apple signed it (it has no signedDate)")
    func appTransactionCheckedAtItsReceiptCreationDate() async throws {
        let pki = try TestPKI(
            .leafValid(Date(timeIntervalSince1970: 1_704_067_200)...Date(timeIntervalSince1970: 1_719_792_000))
        )
        let verifier = try verifier(trusting: pki)
        let signer = pki.signer()
        /// An app transaction as Apple signs one (no signedDate), created at `milliseconds`.
        func appTransaction(createdAt milliseconds: Int64) throws -> String {
            try signer.sign(json: [
                "receiptType": "Sandbox", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
                "originalApplicationVersion": "1.0", "receiptCreationDate": milliseconds,
            ])
        }
        // Signed while the leaf was valid: it still verifies now that the leaf has expired.
        let verified = try await verifier.verifyAppTransaction(try appTransaction(createdAt: 1_710_000_000_000))
        #expect(verified.environment == .sandbox)
        // Signed after the leaf expired: untrusted.
        let late = await #expect(throws: VerificationError.self) {
            try await verifier.verifyAppTransaction(try appTransaction(createdAt: 1_720_000_000_000))
        }
        #expect(late?.code == .untrustedChain)
    }

    @Test("a forged nested transaction inside a genuinely signed notification is rejected")
    func forgedNestedTransaction() async throws {
        let signer = Self.pki.signer()
        let forgedByKey = try signer.signedNotification(
            type: "DID_RENEW",
            signedDate: Self.signedDate,
            transaction: signer.transactionPayload(),
            nestedVariant: .signedWithKey(P256.Signing.PrivateKey())
        )
        let error = await rejection(forgedByKey, by: try verifier())
        #expect(error?.code == .badSignature)
        #expect(error?.detail.hasPrefix("data.signedTransactionInfo") == true)

        let otherPKI = try TestPKI()
        let forgedByChain = try signer.signedNotification(
            type: "DID_RENEW",
            signedDate: Self.signedDate,
            dataOverrides: ["signedTransactionInfo": otherPKI.signer().signedTransaction()]
        )
        let chainError = await rejection(forgedByChain, by: try verifier())
        #expect(chainError?.code == .untrustedChain)

        let forgedRenewal = try signer.signedNotification(
            type: "DID_RENEW",
            signedDate: Self.signedDate,
            dataOverrides: ["signedRenewalInfo": otherPKI.signer().signedRenewalInfo()]
        )
        let renewalError = await rejection(forgedRenewal, by: try verifier())
        #expect(renewalError?.code == .untrustedChain)
        #expect(renewalError?.detail.hasPrefix("data.signedRenewalInfo") == true)
    }

    @Test("a nested transaction of another app is the wrong app, even if that app is configured")
    func nestedTransactionOfAnotherApp() async throws {
        let signer = Self.pki.signer()
        var other = signer
        other.bundleID = "com.example.other"
        let token = try signer.signedNotification(
            type: "DID_RENEW",
            signedDate: Self.signedDate,
            dataOverrides: ["signedTransactionInfo": other.signedTransaction()]
        )
        let verifier = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: signer.bundleID), AppIdentity(bundleID: other.bundleID)],
                environment: .sandbox,
                trust: TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER])
            )
        )
        let error = await rejection(token, by: verifier)
        #expect(error?.code == .wrongApp)
    }

    @Test("x5c[2] is never trusted: any certificate there is ignored, the configured root decides")
    func headerRootIsIgnored() async throws {
        let stranger = try TestPKI()
        let x5c = [Self.pki.x5c[0], Self.pki.x5c[1], stranger.x5c[2]]
        let token = try Self.pki.signer().sign(
            json: Self.pki.signer().notificationPayload(type: "TEST", signedDate: Self.signedDate),
            variant: .customX5C(x5c)
        )
        _ = try await verifier().verifyNotification(token)
        let error = await rejection(token, by: try verifier(trusting: stranger))
        #expect(error?.code == .untrustedChain)
    }

    @Test("several apps: each one's data verifies, others are the wrong app")
    func severalApps() async throws {
        let verifier = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [
                    AppIdentity(bundleID: "com.example.one", appAppleID: 1),
                    AppIdentity(bundleID: "com.example.two", appAppleID: 2),
                ],
                environment: .production,
                trust: TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER])
            )
        )
        for (bundle, id) in [("com.example.one", Int64(1)), ("com.example.two", 2)] {
            let signer = Self.pki.signer(bundleID: bundle, appAppleID: id, environment: "Production")
            _ = try await verifier.verifyNotification(
                signer.signedNotification(type: "TEST", signedDate: Self.signedDate)
            )
        }
        let swapped = Self.pki.signer(bundleID: "com.example.one", appAppleID: 2, environment: "Production")
        let error = await rejection(
            try swapped.signedNotification(type: "TEST", signedDate: Self.signedDate),
            by: verifier
        )
        #expect(error?.code == .wrongApp)
        let stranger = Self.pki.signer(bundleID: "com.example.three", appAppleID: 3, environment: "Production")
        let strangerError = await rejection(
            try stranger.signedNotification(type: "TEST", signedDate: Self.signedDate),
            by: verifier
        )
        #expect(strangerError?.code == .wrongApp)
    }

    @Test("environment comes from summary, appData or externalPurchaseToken when there is no data")
    func otherSections() async throws {
        let signer = Self.pki.signer()
        let sandbox = try verifier()
        let base = signer.notificationEnvelope(
            type: "RENEWAL_EXTENSION",
            subtype: "SUMMARY",
            signedDate: Self.signedDate
        )

        var summary = base
        summary["summary"] = ["environment": "Sandbox", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID]
        _ = try await sandbox.verifyNotification(signer.sign(json: summary))

        var token = base
        token["externalPurchaseToken"] = [
            "externalPurchaseId": "SANDBOX_b2158121", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
        ]
        let verified = try await sandbox.verifyNotification(signer.sign(json: token))
        #expect(verified.claims.environment == .sandbox)

        token["externalPurchaseToken"] = [
            "externalPurchaseId": "b2158121", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
        ]
        let productionToken = await rejection(try signer.sign(json: token), by: sandbox)
        #expect(productionToken?.code == .wrongEnvironment)

        let appTransaction = try signer.sign(json: [
            "receiptType": "Sandbox", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
            "originalApplicationVersion": "1.0", "signedDate": 1_735_689_600_000,
        ])
        var rescind = signer.notificationEnvelope(type: "RESCIND_CONSENT", signedDate: Self.signedDate)
        rescind["appData"] = [
            "environment": "Sandbox", "bundleId": signer.bundleID, "appAppleId": signer.appAppleID,
            "signedAppTransactionInfo": appTransaction,
        ]
        let rescinded = try await sandbox.verifyNotification(signer.sign(json: rescind))
        #expect(rescinded.appTransaction != nil)

        var empty = base
        empty["summary"] = ["bundleId": signer.bundleID, "appAppleId": signer.appAppleID]
        let noEnvironment = await rejection(try signer.sign(json: empty), by: sandbox)
        #expect(noEnvironment?.code == .wrongEnvironment)
    }

    @Test("Production data is the wrong environment for a Sandbox verifier, and vice versa")
    func environments() async throws {
        let production = Self.pki.signer(environment: "Production")
        let error = await rejection(
            try production.signedNotification(type: "TEST", signedDate: Self.signedDate),
            by: try verifier()
        )
        #expect(error?.code == .wrongEnvironment)
        let transactionError = await #expect(throws: VerificationError.self) {
            try await verifier(environment: .production).verifyTransaction(Self.pki.signer().signedTransaction())
        }
        #expect(transactionError?.code == .wrongEnvironment)
    }

    @Test("fractional and missing signedDate: parsed as Double, or validated now")
    func signedDates() async throws {
        let signer = Self.pki.signer()
        var payload = signer.transactionPayload()
        payload["signedDate"] = 1_697_679_936_049.7297
        let verified = try await verifier().verifyTransaction(signer.signedTransaction(payload))
        let date = try #require(verified.signedDate)
        #expect(abs(date.timeIntervalSince1970 - 1_697_679_936.0497297) < 0.000_01)

        payload["signedDate"] = nil
        let undated = try await verifier().verifyTransaction(signer.signedTransaction(payload))
        #expect(undated.signedDate == nil)

        let expiredNow = try TestPKI(
            .leafValid(Date(timeIntervalSince1970: 1_577_836_800)...Date(timeIntervalSince1970: 1_609_459_200))
        )
        var undatedExpired = expiredNow.signer().transactionPayload()
        undatedExpired["signedDate"] = nil
        let error = await #expect(throws: VerificationError.self) {
            try await verifier(trusting: expiredNow).verifyTransaction(
                expiredNow.signer().signedTransaction(undatedExpired)
            )
        }
        #expect(error?.code == .untrustedChain)
    }

    @Test("Xcode-environment data signed by anyone is rejected unless allowed")
    func xcodeEnvironmentClaim() async throws {
        let attacker = try TestPKI()
        let token = try attacker.signer(environment: "Xcode").signedTransaction()
        let error = await #expect(throws: VerificationError.self) { try await verifier().verifyTransaction(token) }
        #expect(error?.code == .untrustedChain)
    }

    @Test("the root can be written to DER for dev setups")
    func writesRoot() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("storeledger-root-\(UUID()).der")
        defer { try? FileManager.default.removeItem(at: url) }
        try Self.pki.writeRootDER(to: url)
        #expect(try Data(contentsOf: url) == Self.pki.rootDER)
        let trust = try TrustConfiguration.parse(base64DERList: Self.pki.rootBase64)
        #expect(trust.rootCertificatesDER == [Self.pki.rootDER])
    }
}
