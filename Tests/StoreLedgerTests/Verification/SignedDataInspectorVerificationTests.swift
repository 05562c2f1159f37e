import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing

/// The logic behind `storeledger verify`: input extraction, kind detection, verification, rendering.
@Suite("Verification: signed data inspector (storeledger verify)")
struct SignedDataInspectorVerificationTests {
    /// Options as `storeledger verify --root testCA.der --bundle-id com.example --environment Sandbox` builds them.
    func appleOptions(environment: AppStoreEnvironment? = .sandbox) throws -> SignedDataInspector.Options {
        SignedDataInspector.Options(
            trust: try AppleVectors.testCATrust(),
            apps: [AppIdentity(bundleID: AppleVectors.bundleID)],
            environment: environment
        )
    }

    @Test(
        "Apple's vectors are detected as the right kind and verified",
        arguments: [
            ("testNotification", SignedDataKind.notification),
            ("transactionInfo", SignedDataKind.transaction),
            ("renewalInfo", SignedDataKind.renewalInfo),
        ]
    )
    func appleVectors(name: String, kind: SignedDataKind) async throws {
        let report = try await SignedDataInspector(options: appleOptions()).inspect(AppleVectors.signed(name))
        #expect(report.kind == kind)
        #expect(report.notes.isEmpty)
        #expect(
            report.expandedPayloadText.contains("\"environment\" : \"Sandbox\"")
                || report.expandedPayloadText.contains("\"environment\": \"Sandbox\"")
        )
        #expect(kind == .notification ? report.notification != nil : report.signedData != nil)
    }

    @Test("a JSON body and surrounding whitespace are accepted")
    func jsonBody() async throws {
        let token = try AppleVectors.signed("testNotification")
        let body = "\n  {\"signedPayload\": \"\(token)\"}\n\n"
        let report = try await SignedDataInspector(options: appleOptions()).inspect(body)
        #expect(report.kind == .notification)
        #expect(report.notification?.claims.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(try SignedDataInspector.signedData(in: "  \(token)\n") == token)
        #expect(try SignedDataInspector.signedData(in: "\"\(token)\"") == token)
        // Unicode spaces and line separators too, at either end only; a JSON body's value is trimmed as well.
        #expect(try SignedDataInspector.signedData(in: "\u{00A0}\u{2028}\r\n\t\(token)\u{3000} \u{0085}") == token)
        #expect(try SignedDataInspector.signedData(in: "{\"signedPayload\": \" \(token)\\n\"}") == token)
        #expect(throws: VerificationError.self) { try SignedDataInspector.signedData(in: "\u{00A0} \u{2029}\n") }
    }

    @Test("inputs without signed data are malformed", arguments: ["", "   ", "{\"other\": 1}", "{not json", "a.b"])
    func noSignedData(input: String) async throws {
        let error = await #expect(throws: VerificationError.self) {
            try await SignedDataInspector(options: appleOptions()).inspect(input)
        }
        #expect(error?.code == .malformed)
    }

    @Test("Apple's failing vectors keep their typed errors")
    func appleFailures() async throws {
        let inspector = SignedDataInspector(options: try appleOptions())
        let wrongApp = await #expect(throws: VerificationError.self) {
            try await inspector.inspect(AppleVectors.signed("wrongBundleId"))
        }
        #expect(wrongApp?.code == .wrongApp)
        let malformed = await #expect(throws: VerificationError.self) {
            try await inspector.inspect(AppleVectors.signed("missingX5CHeaderClaim"))
        }
        #expect(malformed?.code == .malformed)
        let flipped = await #expect(throws: VerificationError.self) {
            try await inspector.inspect(JWSSurgery.flippingSignatureByte(of: AppleVectors.signed("testNotification")))
        }
        #expect(flipped?.code == .badSignature)
        let production = SignedDataInspector(
            options: .init(
                trust: try AppleVectors.testCATrust(),
                apps: [AppIdentity(bundleID: "com.example", appAppleID: 1234)],
                environment: .production
            )
        )
        let wrongEnvironment = await #expect(throws: VerificationError.self) {
            try await production.inspect(AppleVectors.signed("testNotification"))
        }
        #expect(wrongEnvironment?.code == .wrongEnvironment)
        let g3 = SignedDataInspector(options: .init())
        let untrusted = await #expect(throws: VerificationError.self) {
            try await g3.inspect(AppleVectors.signed("testNotification"))
        }
        #expect(untrusted?.code == .untrustedChain)
    }

    @Test("without bundle id and environment the payload's own are used, and that is noted")
    func derivedConfiguration() async throws {
        let inspector = SignedDataInspector(options: .init(trust: try AppleVectors.testCATrust()))
        let report = try await inspector.inspect(AppleVectors.signed("testNotification"))
        #expect(report.configuration.apps.map(\.bundleID) == ["com.example"])
        #expect(report.configuration.environment == .sandbox)
        #expect(report.notes.count == 2)
    }

    @Test("nested JWS are decoded in place in the rendered payload")
    func nestedJWSExpanded() async throws {
        let pki = try TestPKI()
        let signer = pki.signer()
        let token = try signer.signedNotification(
            type: "SUBSCRIBED",
            subtype: "RESUBSCRIBE",
            transaction: signer.transactionPayload(transactionID: "777"),
            renewalInfo: signer.renewalInfoPayload(originalTransactionID: "777")
        )
        let inspector = SignedDataInspector(
            options: .init(
                trust: try TrustConfiguration(rootCertificatesDER: [pki.rootDER]),
                apps: [AppIdentity(bundleID: signer.bundleID)],
                environment: .sandbox
            )
        )
        let report = try await inspector.inspect(token)
        let object = JWSSurgery.object(report.expandedPayloadJSON)
        let data = try #require(object["data"] as? [String: Any])
        let transaction = try #require(data["signedTransactionInfo"] as? [String: Any])
        #expect(transaction["transactionId"] as? String == "777")
        let renewal = try #require(data["signedRenewalInfo"] as? [String: Any])
        #expect(renewal["originalTransactionId"] as? String == "777")
        #expect(report.expandedPayloadText.contains("\n"))
    }

    @Test(
        "payload shapes are classified",
        arguments: [
            ("{\"notificationType\":\"TEST\"}", SignedDataKind.notification),
            ("{\"summary\":{}}", SignedDataKind.notification),
            (
                "{\"receiptType\":\"Sandbox\",\"bundleId\":\"a\",\"originalApplicationVersion\":\"1\"}",
                SignedDataKind.appTransaction
            ),
            ("{\"transactionId\":\"1\",\"bundleId\":\"a\"}", SignedDataKind.transaction),
            ("{\"bundleId\":\"a\",\"environment\":\"Sandbox\"}", SignedDataKind.transaction),
            ("{\"autoRenewStatus\":1,\"environment\":\"Sandbox\"}", SignedDataKind.renewalInfo),
            ("{\"environment\":\"Sandbox\"}", SignedDataKind.renewalInfo),
        ]
    )
    func kinds(json: String, kind: SignedDataKind) {
        #expect(SignedDataInspector.kind(ofPayload: Data(json.utf8)) == kind)
    }

    @Test("Xcode data needs --allow-xcode")
    func xcode() async throws {
        let token = try AppleVectors.xcode("xcode-signed-transaction")
        let strict = SignedDataInspector(options: .init())
        let error = await #expect(throws: VerificationError.self) { try await strict.inspect(token) }
        #expect(error?.code == .untrustedChain)
        let relaxed = SignedDataInspector(options: .init(allowXcodeEnvironment: true))
        let report = try await relaxed.inspect(token)
        #expect(report.kind == .transaction)
        #expect(report.signedData?.isLocalTestData == true)
        #expect(report.expandedPayloadText.contains("1697679936049.7297"))
    }
}
