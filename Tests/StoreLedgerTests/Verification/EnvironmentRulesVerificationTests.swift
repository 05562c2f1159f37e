import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// A verifier accepting several environments judges each payload by the rules of the environment it is signed for:
/// `appAppleId` is required and must match for Production data only, and every rejection names its real cause.
@Suite("Verification: each payload judged by the environment it is signed for")
struct EnvironmentRulesVerificationTests {
    static let pki = try! TestPKI()
    static let signedDate = Date(timeIntervalSince1970: 1_735_689_600)
    static let app = AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)

    func verifier(
        _ environments: [AppStoreEnvironment] = [.production, .sandbox], source: String? = nil, allowXcode: Bool = false
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [Self.app], environments: environments, environmentsSource: source,
                trust: try TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER]), allowXcodeEnvironment: allowXcode
            ))
    }

    func notification(_ environment: String, dataOverrides: [String: Any] = [:], nestedEnvironment: String? = nil) throws -> String {
        let signer = Self.pki.signer(environment: environment)
        var nested = signer
        nested.environment = nestedEnvironment ?? environment
        return try signer.signedNotification(
            type: "DID_RENEW", signedDate: Self.signedDate, transaction: nested.transactionPayload(),
            renewalInfo: nested.renewalInfoPayload(), status: 1, dataOverrides: dataOverrides
        )
    }

    func rejection(_ body: () async throws -> some Any) async -> VerificationError? {
        do {
            _ = try await body()
            return nil
        } catch let error as VerificationError {
            return error
        } catch {
            return nil
        }
    }

    @Test("a Sandbox notification without appAppleId verifies beside Production; a Production one needs its appAppleId")
    func sandboxWithoutAppAppleIDProductionWithIt() async throws {
        let verifier = try verifier()
        let sandbox = try await verifier.verifyNotification(try notification("Sandbox"))
        #expect(sandbox.claims.environment == .sandbox)
        #expect(sandbox.claims.appAppleID == nil)
        let production = try await verifier.verifyNotification(try notification("Production"))
        #expect(production.claims.appAppleID == TestSigner.defaultAppAppleID)

        let missing = await rejection {
            try await verifier.verifyNotification(try notification("Production", dataOverrides: ["appAppleId": NSNull()]))
        }
        #expect(missing?.code == .wrongApp)
        #expect(missing?.detail == "signed for Production without an appAppleId; Production data of 'com.example.storeledger' must carry 1234567890")
        let wrong = await rejection { try await verifier.verifyNotification(try notification("Production", dataOverrides: ["appAppleId": 42])) }
        #expect(wrong?.detail == "appAppleId 42 is not the configured Apple id of 'com.example.storeledger' (1234567890)")
        // A Sandbox notification that happens to carry some appAppleId (Apple's own TEST vector does) is not judged on it.
        _ = try await verifier.verifyNotification(try notification("Sandbox", dataOverrides: ["appAppleId": 42]))
    }

    @Test("the environment, not the app Apple id, is named when the deployment does not accept it")
    func wrongEnvironmentIsTheCause() async throws {
        let productionOnly = try verifier([.production], source: "APPLE_ENVIRONMENTS=Production")
        let expected = "wrongEnvironment: signed for Sandbox, which this deployment does not accept (APPLE_ENVIRONMENTS=Production)"
        let error = await rejection { try await productionOnly.verifyNotification(try notification("Sandbox")) }
        #expect(error?.description == expected)
        let transaction = await rejection { try await productionOnly.verifyTransaction(try Self.pki.signer().signedTransaction()) }
        #expect(transaction?.description == expected)
        let renewal = await rejection { try await productionOnly.verifyRenewalInfo(try Self.pki.signer().signedRenewalInfo()) }
        #expect(renewal?.code == .wrongEnvironment)

        let sandboxOnly = try verifier([.sandbox])
        let production = await rejection { try await sandboxOnly.verifyNotification(try notification("Production")) }
        #expect(production?.description == "wrongEnvironment: signed for Production, which this deployment does not accept (accepted: Sandbox)")
    }

    @Test("a foreign app is the wrong app whatever its environment")
    func foreignAppFirst() async throws {
        let stranger = Self.pki.signer(bundleID: "com.example.stranger", environment: "Sandbox")
        let error = await rejection {
            try await verifier([.production]).verifyNotification(try stranger.signedNotification(type: "TEST", signedDate: Self.signedDate))
        }
        #expect(error?.code == .wrongApp)
        #expect(error?.detail.contains("com.example.stranger") == true)
    }

    @Test("nested data must be signed for the notification's environment")
    func nestedEnvironmentMustMatch() async throws {
        let error = await rejection { try await verifier().verifyNotification(try notification("Production", nestedEnvironment: "Sandbox")) }
        #expect(error?.description == "wrongEnvironment: data.signedTransactionInfo: signed for Sandbox inside a notification signed for Production")
    }

    @Test("Xcode and LocalTesting data is governed by allowXcodeEnvironment and never asked for an appAppleId")
    func localTestData() async throws {
        for environment in ["Xcode", "LocalTesting"] {
            let signer = Self.pki.signer(environment: environment)
            let local = JWSVariant.customX5C([Self.pki.x5c[0]])
            let token = try signer.signedNotification(
                type: "SUBSCRIBED", signedDate: Self.signedDate, transaction: signer.transactionPayload(), nestedVariant: local, variant: local
            )
            let verified = try await verifier([.production], allowXcode: true).verifyNotification(token)
            #expect(verified.isLocalTestData)
            let refused = await rejection { try await verifier([.production, .sandbox]).verifyNotification(token) }
            #expect(refused?.code == .untrustedChain)
            #expect(refused?.detail.hasPrefix("signed for \(environment), whose data is signed locally by Xcode") == true)
            #expect(refused?.detail.contains("ALLOW_XCODE_DATA=true") == true)
        }
    }

    @Test("an app transaction (RESCIND_CONSENT) in Sandbox needs no appAppleId either")
    func sandboxAppTransaction() async throws {
        let signer = Self.pki.signer()
        let appTransaction = try signer.sign(json: [
            "receiptType": "Sandbox", "bundleId": signer.bundleID, "originalApplicationVersion": "1.0", "signedDate": 1_735_689_600_000,
        ])
        var rescind = signer.notificationEnvelope(type: "RESCIND_CONSENT", signedDate: Self.signedDate)
        rescind["appData"] = ["environment": "Sandbox", "bundleId": signer.bundleID, "signedAppTransactionInfo": appTransaction]
        let verified = try await verifier().verifyNotification(try signer.sign(json: rescind))
        #expect(verified.appTransaction != nil)
    }

    @Test("a configuration accepting Production needs every app's Apple ID; one accepting nothing is refused")
    func configurationRules() throws {
        let noAppleID = VerifierConfiguration(apps: [AppIdentity(bundleID: "com.example")], environments: [.sandbox, .production])
        #expect(throws: VerificationError.self) { try noAppleID.validate() }
        let nothing = VerifierConfiguration(apps: [Self.app], environments: [])
        #expect(throws: VerificationError.self) { try nothing.validate() }
        try VerifierConfiguration(apps: [AppIdentity(bundleID: "com.example")], environments: [.sandbox]).validate()
    }
}
