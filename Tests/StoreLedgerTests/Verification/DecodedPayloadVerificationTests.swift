import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerTestSupport
import Testing

@testable import StoreLedgerVerification

/// Verification reads a payload of Apple's plain shape once, into its model, and takes the claims from the model:
/// those claims must be the ones `JSONDecoder` reads from the same text, every other shape must still be read by
/// `JSONDecoder`, and the models handed on must be those the ledger would decode from the verified bytes itself.
@Suite("Verification: payloads read once into their models")
struct DecodedPayloadVerificationTests {
    /// One genuine PKI shared by the suite.
    static let pki = try! TestPKI()

    /// A verifier for the signer's default app in `environment`, trusting the shared PKI.
    func verifier(environment: AppStoreEnvironment = .sandbox) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID, appAppleID: TestSigner.defaultAppAppleID)],
                environment: environment,
                trust: TrustConfiguration(rootCertificatesDER: [Self.pki.rootDER])
            )
        )
    }

    /// The claims verification reads for a payload of `kind`, as text (the type has no `==`).
    func usedClaims(_ claims: SignedPayloadClaims, _ kind: DecodedPayload.Kind) -> String {
        switch kind {
        case .notification:
            let scope = claims.notificationScope
            return "\(String(describing: claims.signedDate)) \(String(describing: claims.notificationUUID)) "
                + "\(String(describing: claims.notificationType)) \(String(describing: claims.subtype)) "
                + "\(String(describing: claims.version)) \(String(describing: scope.bundleId)) "
                + "\(String(describing: scope.appAppleId)) \(String(describing: scope.environment)) "
                + "\(nested(claims.data?.signedTransactionInfo)) \(nested(claims.data?.signedRenewalInfo)) "
                + "\(nested(claims.appData?.signedAppTransactionInfo))"
        case .transaction:
            return "\(String(describing: claims.signedDate)) \(String(describing: claims.environment)) \(String(describing: claims.bundleId))"
        case .renewalInfo:
            return "\(String(describing: claims.signedDate)) \(String(describing: claims.environment))"
        }
    }

    /// A nested JWS named by its length and signature (a failure message stays readable).
    func nested(_ jws: String?) -> String {
        jws.map { "JWS(\($0.count) bytes …\($0.suffix(16)))" } ?? "nil"
    }

    /// JSON text of `object` (sorted keys, so a test can splice in text a dictionary cannot hold).
    func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    /// Payloads of every kind as the test signer makes them in Sandbox and Production, with and without optional
    /// members, plus Apple's own mock payloads.
    func plainPayloads() throws -> [(DecodedPayload.Kind, Data)] {
        var payloads: [(DecodedPayload.Kind, Data)] = []
        for environment in ["Sandbox", "Production"] {
            let signer = Self.pki.signer(environment: environment)
            let transaction = try signer.signedTransaction()
            let renewal = try signer.signedRenewalInfo()
            payloads += [
                (
                    .notification,
                    try json(
                        signer.notificationPayload(
                            type: "SUBSCRIBED", subtype: "INITIAL_BUY",
                            signedTransactionInfo: transaction, signedRenewalInfo: renewal, status: 1))
                ),
                (.notification, try json(signer.notificationPayload(type: "DID_RENEW", signedTransactionInfo: transaction))),
                (.notification, try json(signer.notificationPayload(type: "TEST"))),
                (.notification, try json(signer.notificationPayload(type: "REFUND", dataOverrides: ["unknownMember": ["a": [1, 2]]]))),
                (.transaction, try json(signer.transactionPayload())),
                (.transaction, try json(signer.transactionPayload(overrides: ["revocationDate": 1_735_689_600_000, "revocationReason": 1]))),
                (.renewalInfo, try json(signer.renewalInfoPayload())),
            ]
        }
        // Absent, null and empty members read alike both ways.
        let signer = Self.pki.signer(environment: "Production")
        var dataNull = signer.notificationEnvelope(type: "TEST")
        dataNull["data"] = NSNull()
        var dataEmpty = signer.notificationEnvelope(type: "TEST")
        dataEmpty["data"] = [String: Any]()
        var nullMembers = signer.notificationPayload(
            type: "DID_RENEW", dataOverrides: ["environment": NSNull(), "appAppleId": NSNull(), "signedRenewalInfo": NSNull()])
        nullMembers["subtype"] = NSNull()
        nullMembers["summary"] = NSNull()
        nullMembers["externalPurchaseToken"] = NSNull()
        payloads += [
            (.notification, try json(dataNull)), (.notification, try json(dataEmpty)), (.notification, try json(nullMembers)),
            (.transaction, try json(signer.transactionPayload(overrides: ["environment": NSNull(), "signedDate": NSNull()]))),
        ]
        for (kind, name) in [
            (DecodedPayload.Kind.notification, "testNotification"), (.transaction, "transactionInfo"), (.renewalInfo, "renewalInfo"),
        ] {
            let token = try String(decoding: AppleVectors.data("mock_signed_data/\(name)"), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            payloads.append((kind, try CompactJWS(token).payloadJSON))
        }
        return payloads
    }

    @Test("claims read from a payload's model are the claims JSONDecoder reads from its text")
    func claimsAgree() throws {
        let payloads = try plainPayloads()
        #expect(payloads.count == 21)
        for (kind, json) in payloads {
            let decoded = try #require(DecodedPayload.plain(kind, json: json), "\(kind): \(String(decoding: json, as: UTF8.self))")
            let lenient = try JSONDecoder().decode(SignedPayloadClaims.self, from: json)
            #expect(usedClaims(SignedPayloadClaims(decoded), kind) == usedClaims(lenient, kind))
        }
    }

    @Test("every other shape is left to JSONDecoder")
    func otherShapesFallBack() throws {
        let signer = Self.pki.signer(environment: "Production")
        let summary: [String: Any] = ["requestIdentifier": "r", "environment": "Production", "appAppleId": 1, "bundleId": signer.bundleID]
        var withSummary = signer.notificationEnvelope(type: "RENEWAL_EXTENSION", subtype: "SUMMARY")
        withSummary["summary"] = summary
        var withAppData = signer.notificationEnvelope(type: "RESCIND_CONSENT")
        withAppData["appData"] = ["environment": "Production", "appAppleId": 1, "bundleId": signer.bundleID]
        let declined: [(DecodedPayload.Kind, Data)] = [
            (.notification, try json(withSummary)),
            (.notification, try json(withAppData)),
            // Lenient claims read a numeric string as the number, a fractional date as it is: the plain reader gives up.
            (.notification, try json(signer.notificationPayload(type: "DID_RENEW", dataOverrides: ["appAppleId": "1234"]))),
            (.transaction, try json(signer.transactionPayload(overrides: ["signedDate": 1_735_689_600_000.5]))),
            (.renewalInfo, try json(signer.renewalInfoPayload(overrides: ["environment": 7]))),
            (.transaction, Data(#"{"bundleId":"a","bundleId":"b","environment":"Sandbox"}"#.utf8)),
            (.notification, Data(#"["not an object"]"#.utf8)),
        ]
        for (kind, json) in declined {
            #expect(DecodedPayload.plain(kind, json: json) == nil, "\(String(decoding: json, as: UTF8.self))")
        }
    }

    @Test("a verified notification carries the models the ledger would decode from its verified bytes")
    func verifiedNotificationCarriesModels() async throws {
        let signer = Self.pki.signer()
        let token = try signer.signedNotification(
            type: "SUBSCRIBED", subtype: "RESUBSCRIBE",
            transaction: signer.transactionPayload(transactionID: "77"),
            renewalInfo: signer.renewalInfoPayload(originalTransactionID: "77"), status: 1
        )
        let verified = try await verifier().verifyNotification(token)
        let (payload, withoutNestedJWS) = try NotificationPayload.decodeStrippingNestedJWS(json: verified.payloadJSON)
        #expect(verified.decoded == .notification(try #require(PlainNotification(json: verified.payloadJSON))))
        let carried = try verified.payloadStrippingNestedJWS()
        #expect(carried.payload == payload)
        #expect(carried.withoutNestedJWS == withoutNestedJWS)
        #expect(withoutNestedJWS != nil)
        let transaction = try #require(verified.transaction)
        #expect(transaction.decoded == .transaction(try TransactionPayload.decode(json: transaction.payloadJSON)))
        #expect(try transaction.transactionPayload() == TransactionPayload.decode(json: transaction.payloadJSON))
        #expect(transaction.decoded?.transaction?.transactionID?.rawValue == "77")
        let renewal = try #require(verified.renewalInfo)
        #expect(renewal.decoded == .renewalInfo(try RenewalInfoPayload.decode(json: renewal.payloadJSON)))
        #expect(try renewal.renewalInfoPayload() == RenewalInfoPayload.decode(json: renewal.payloadJSON))

        let standalone = try await verifier().verifyTransaction(signer.signedTransaction())
        #expect(standalone.decoded == .transaction(try TransactionPayload.decode(json: standalone.payloadJSON)))
        let standaloneRenewal = try await verifier().verifyRenewalInfo(signer.signedRenewalInfo())
        #expect(standaloneRenewal.decoded == .renewalInfo(try RenewalInfoPayload.decode(json: standaloneRenewal.payloadJSON)))
    }

    @Test("a payload JSONDecoder reads verifies as before and carries no model")
    func fallbackVerifiesAsBefore() async throws {
        let signer = Self.pki.signer(environment: "Production")
        // appAppleId as a numeric string: the claims read it as 1234, as they always did; the ledger decodes itself.
        let payload = signer.notificationPayload(
            type: "DID_RENEW", signedTransactionInfo: try signer.signedTransaction(),
            dataOverrides: ["appAppleId": String(TestSigner.defaultAppAppleID)]
        )
        let verified = try await verifier(environment: .production).verifyNotification(try signer.sign(json: payload))
        #expect(verified.decoded == nil)
        #expect(verified.claims.appAppleID == TestSigner.defaultAppAppleID)
        #expect(verified.claims.environment == .production)
        #expect(verified.transaction?.decoded != nil)
        // The ledger then decodes the notification itself, as it always did: here `JSONDecoder` refuses the string.
        #expect(throws: DecodingError.self) { try verified.payloadStrippingNestedJWS() }
        #expect(throws: DecodingError.self) { try NotificationPayload.decodeStrippingNestedJWS(json: verified.payloadJSON) }
    }

    @Test("claims read from the model are judged as before: another app, a nested JWS of another app or environment")
    func modelClaimsJudgedAsBefore() async throws {
        let signer = Self.pki.signer()
        let other = Self.pki.signer(bundleID: "com.example.other")
        let production = Self.pki.signer(environment: "Production")
        let cases: [(token: String, code: VerificationError.Code, detailPrefix: String)] = [
            (try other.signedNotification(type: "DID_RENEW"), .wrongApp, ""),
            (
                try signer.sign(json: signer.notificationPayload(type: "DID_RENEW", signedTransactionInfo: try other.signedTransaction())),
                .wrongApp, "data.signedTransactionInfo"
            ),
            (
                try signer.sign(json: signer.notificationPayload(type: "DID_RENEW", signedRenewalInfo: try production.signedRenewalInfo())),
                .wrongEnvironment, "data.signedRenewalInfo"
            ),
        ]
        for (token, code, detailPrefix) in cases {
            // The model path is the one taken: the plain reader reads the notification.
            #expect(DecodedPayload.plain(.notification, json: try CompactJWS(token).payloadJSON) != nil)
            let error = await #expect(throws: VerificationError.self) { try await verifier().verifyNotification(token) }
            #expect(error?.code == code)
            #expect(error?.detail.hasPrefix(detailPrefix) == true, "\(String(describing: error))")
        }
    }

    /// What the plain reader skips without reading (unknown members, sections that must be null) it may see twice or
    /// with numbers no model holds; `JSONDecoder` must read such a text too, to the same claims.
    @Test(arguments: [
        #"{"notificationType":"TEST","x":1,"x":2,"data":{"bundleId":"b","y":true,"y":false}}"#,
        #"{"notificationType":"TEST","x":1e99999,"data":{"environment":"Sandbox","z":-1.5E-400}}"#,
        #"{"notificationType":"TEST","x":1234567890123456789012345678901234567890}"#,
        #"{"notificationType":"TEST","summary":null,"summary":null,"appData":null}"#,
        #"{"notificationType":"TEST","x":{"y":[1,{"z":null}]},"x":"again","data":{}}"#,
    ])
    func skippedMembersReadByJSONDecoderToo(_ text: String) throws {
        let json = Data(text.utf8)
        let decoded = try #require(DecodedPayload.plain(.notification, json: json))
        let lenient = try JSONDecoder().decode(SignedPayloadClaims.self, from: json)
        #expect(usedClaims(SignedPayloadClaims(decoded), .notification) == usedClaims(lenient, .notification))
    }

    /// Texts derived from genuine payloads by cutting, overwriting and inserting bytes (a seeded generator, so a
    /// failure repeats): the plain reader must never read past its input, and wherever it reads one, `JSONDecoder`
    /// must read the same text too, with the same claims. Verification runs this reader on bytes not yet
    /// authenticated.
    @Test("mangled payloads: the plain reader reads only what JSONDecoder reads, with the same claims")
    func mangledPayloads() throws {
        var generator = SplitMix64(seed: 15)
        let alphabet = Array(#"{}[]":,.-+0123456789eEtrufalsn \"abc"#.utf8) + [0x00, 0x0A, 0xC3, 0xA9, 0xFF]
        var readPlainly = 0
        var tried = 0
        for (kind, original) in try plainPayloads() {
            let bytes = Array(original)
            var variants: [[UInt8]] = stride(from: 0, to: bytes.count, by: max(1, bytes.count / 40)).map { Array(bytes[..<$0]) }
            for _ in 0..<150 {
                var mangled = bytes
                for _ in 0...Int(generator.next() % 3) {
                    let at = Int(generator.next() % UInt64(mangled.count))
                    let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    switch generator.next() % 3 {
                    case 0: mangled[at] = byte
                    case 1: mangled.insert(byte, at: at)
                    default: mangled.remove(at: at)
                    }
                }
                variants.append(mangled)
            }
            for variant in variants {
                tried += 1
                let json = Data(variant)
                guard let decoded = DecodedPayload.plain(kind, json: json) else { continue }
                readPlainly += 1
                let lenient = try #require(
                    try? JSONDecoder().decode(SignedPayloadClaims.self, from: json), "\(String(decoding: json, as: UTF8.self))")
                #expect(usedClaims(SignedPayloadClaims(decoded), kind) == usedClaims(lenient, kind))
            }
        }
        // The mangling leaves enough texts readable for the comparison to mean something, and rejects most.
        #expect(tried > 3_000)
        #expect(readPlainly > 100 && readPlainly < tried / 2, "\(readPlainly) of \(tried)")
    }
}
