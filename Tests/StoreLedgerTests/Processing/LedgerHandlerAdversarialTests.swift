import Crypto
import Foundation
import PostgresNIO
import StoreLedgerCore
import StoreLedgerProcessing
import StoreLedgerSimulation
import StoreLedgerStore
import StoreLedgerTestSupport
import Testing

/// Forgeries are rejected with a typed reason and never reach the facts or the read model.
@Suite("Ledger handler: forgeries never projected")
struct LedgerHandlerAdversarialTests {
    static let trusted = try! TestPKI()

    enum Forgery: String, CaseIterable, Sendable {
        case lookAlikeChain, leafWithoutAppleOID, intermediateWithoutAppleOID, intermediateNotCA
        case algNone, hs256, twoCertificateChain, tamperedPayload, flippedSignature, leafExpiredAtSignedDate
        case forgedNestedTransaction, wrongBundle, unsignedXcodeData
    }

    /// A SUBSCRIBED notification of `originalTransactionID` for `bundleID` in `environment`.
    static func subscribed(
        _ originalTransactionID: OriginalTransactionID = "9000", bundleID: BundleID = "com.example.app", environment: AppStoreEnvironment = .sandbox
    ) -> NotificationFact {
        var builder = SubscriptionLifecycleBuilder(originalTransactionID: originalTransactionID, environment: environment, bundleID: bundleID)
        builder.subscribe()
        guard case .notification(let fact) = builder.facts[0] else { fatalError("subscribe() makes a notification") }
        return fact
    }

    /// The body Apple would POST, forged as `forgery` says.
    static func body(_ forgery: Forgery) throws -> (body: String, expectedCode: String) {
        var pki = trusted
        var outerVariant = JWSVariant.genuine
        var nestedSigner: TestSigner? = nil
        var fact = subscribed()
        var code = "untrustedChain"
        switch forgery {
        case .lookAlikeChain: pki = try TestPKI(.appleLookAlike)
        case .leafWithoutAppleOID: pki = try TestPKI(.leafWithoutAppleOID)
        case .intermediateWithoutAppleOID: pki = try TestPKI(.intermediateWithoutAppleOID)
        case .intermediateNotCA: pki = try TestPKI(.intermediateNotCA)
        case .leafExpiredAtSignedDate:
            pki = try TestPKI(.leafValid(Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_650_000_000)))
        case .algNone:
            outerVariant = .algNone
            code = "malformed"
        case .hs256:
            outerVariant = .hs256(key: Data(trusted.leafKey.publicKey.derRepresentation))
            code = "malformed"
        case .twoCertificateChain:
            outerVariant = .twoCertificateChain
            code = "malformed"
        case .tamperedPayload:
            outerVariant = .tamperedPayload
            code = "badSignature"
        case .flippedSignature:
            outerVariant = .flippedSignatureByte
            code = "badSignature"
        case .forgedNestedTransaction: nestedSigner = TestSigner(pki: try TestPKI(.appleLookAlike))
        case .wrongBundle:
            fact = subscribed(bundleID: "com.evil.app")
            code = "wrongApp"
        case .unsignedXcodeData: fact = subscribed(environment: AppStoreEnvironment(rawValue: "Xcode"))
        }
        return (try envelope(fact, outer: TestSigner(pki: pki), nested: nestedSigner, variant: outerVariant), code)
    }

    /// The body Apple would POST for `fact`: its transaction signed by `nested` (default `outer`), its renewal info and
    /// the notification by `outer`, the notification's JWS shaped as `variant` says.
    static func envelope(_ fact: NotificationFact, outer: TestSigner, nested: TestSigner? = nil, variant: JWSVariant = .genuine) throws -> String {
        var payload = fact.payload
        var data = payload.data ?? NotificationData()
        data.signedTransactionInfo = try (nested ?? outer).sign(try #require(fact.transaction))
        data.signedRenewalInfo = try outer.sign(try #require(fact.renewalInfo))
        payload.data = data
        return #"{"signedPayload":"\#(try outer.sign(payload, variant: variant))"}"#
    }

    @Test(arguments: Forgery.allCases)
    func isRejectedAndNeverProjected(_ forgery: Forgery) async throws {
        let (body, expectedCode) = try Self.body(forgery)
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            try await pipeline.append(source: .appleNotification, body: body)
            try await pipeline.drain()
            #expect(try await pipeline.count(.rejected) == 1)
            let reasons = try await db.client.query("SELECT reject_reason FROM event_queue", logger: db.logger)
            for try await reason in reasons.decode(String.self) {
                #expect(reason.hasPrefix(expectedCode), "\(forgery): \(reason)")
            }
            #expect(try await db.scalar("SELECT count(*) FROM notifications") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM transactions") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 0)
        }
    }

    @Test func theGenuineControlIsAccepted() async throws {
        let fact = Self.subscribed()
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            try await pipeline.append([.notification(fact)])
            try await pipeline.drain()
            #expect(try await pipeline.count(.done) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 1)
        }
    }

    @Test(arguments: [false, true])
    func aStoredBodyWithTwoSignedPayloadsIsRejectedWhicheverCopyIsGenuine(genuineFirst: Bool) async throws {
        // Older receivers stored such bodies; the worker must park them with a reason, not pick one copy.
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            let genuine = try pipeline.signer.signedEvent(for: .notification(Self.subscribed())).body
            let envelope = try #require(try JSONSerialization.jsonObject(with: Data(genuine.utf8)) as? [String: String])
            let jws = try #require(envelope["signedPayload"])
            let copies = genuineFirst ? [jws, "not.a.jws"] : ["not.a.jws", jws]
            try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(copies[0])","signedPayload":"\#(copies[1])"}"#)
            try await pipeline.drain()
            #expect(try await pipeline.count(.rejected) == 1)
            var reasons: [String] = []
            for try await reason in try await db.client.query("SELECT reject_reason FROM event_queue", logger: db.logger).decode(String.self) {
                reasons.append(reason)
            }
            #expect(reasons == [#"malformed: the body has the key "signedPayload" more than once; each key may appear only once"#])
            #expect(try await db.scalar("SELECT count(*) FROM notifications") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 0)
        }
    }

    /// A genuine SUBSCRIBED notification body whose transaction carries `offer` as its offer identifier.
    static func notification(_ originalTransactionID: String, offer: String) throws -> String {
        var fact = subscribed(OriginalTransactionID(originalTransactionID))
        fact.transaction?.offerIdentifier = OfferID(offer)
        return try envelope(fact, outer: TestSigner(pki: trusted))
    }

    /// A genuine notification whose transaction holds a NUL character (`\u0000`: JSON allows it, PostgreSQL stores
    /// none) is rejected with the reason at once, not retried into `dead` on a database error; its batch-mates are done,
    /// and the text `\\u0000` (a backslash, then "u0000") is no NUL.
    @Test func aGenuinePayloadHoldingANULIsRejectedWithItsReasonAndItsBatchMatesAreDone() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            let holding = try await pipeline.append(source: .appleNotification, body: try Self.notification("9100", offer: "spring\u{0}offer"))
            try await pipeline.append(source: .appleNotification, body: try Self.notification("9200", offer: #"spring\u0000offer"#))
            let client = try pipeline.signer.signedTransaction(
                pipeline.signer.transactionPayload(
                    transactionID: "9300", purchaseDate: Date(), expiresDate: Date().addingTimeInterval(86_400), signedDate: Date(),
                    overrides: ["offerIdentifier": "a\u{0}"]))
            try await pipeline.append(source: .client, body: #"{"signedTransaction":"\#(client)"}"#)
            try await pipeline.drain()
            #expect(try await pipeline.count(.rejected) == 2)
            #expect(try await pipeline.count(.done) == 1)
            let reason = try await db.client.query("SELECT reject_reason FROM event_queue WHERE event_id = \(holding.rawValue)", logger: db.logger)
                .decode(String.self).firstAfterReadingAll()
            #expect(
                reason?.hasPrefix("malformed: the verified signedTransactionInfo payload holds a NUL character") == true,
                "\(String(describing: reason))")
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE reject_reason LIKE '%NUL character%'") == 2)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE attempts > 1") == 0)
            #expect(try await db.scalar("SELECT count(*) FROM subscriptions") == 1)
            let stored = try await db.client.query("SELECT transaction_payload->>'offerIdentifier' FROM notifications", logger: db.logger)
                .decode(String.self).firstAfterReadingAll()
            #expect(stored == #"spring\u0000offer"#)
        }
    }

    /// A forged body whose JWS header names an algorithm holding a NUL (anyone may post one; the receiver stores it) is
    /// rejected with the algorithm quoted, the NUL written as `\u0000`: before, PostgreSQL refused the reason's NUL, the
    /// whole batch's completion rolled back, and the forgery was retried (its batch-mates one by one) into `dead`.
    @Test func aForgedHeaderHoldingANULIsRejectedAndItsBatchMatesAreDone() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            let header = Data(#"{"alg":"ES256\u0000","x5c":[]}"#.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            let forged = try await pipeline.append(source: .appleNotification, body: #"{"signedPayload":"\#(header).e30.AA"}"#)
            try await pipeline.append(source: .appleNotification, body: try Self.notification("9400", offer: "summer"))
            try await pipeline.drain()
            let reason = try await db.client.query("SELECT reject_reason FROM event_queue WHERE event_id = \(forged.rawValue)", logger: db.logger)
                .decode(String?.self).firstAfterReadingAll()
            #expect(reason??.contains(#"unsupported algorithm 'ES256\u0000'"#) == true, "\(String(describing: reason))")
            #expect(try await pipeline.count(.rejected) == 1)
            #expect(try await pipeline.count(.done) == 1)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE attempts > 1") == 0)
        }
    }

    @Test func aBodyThatIsNotAnEnvelopeIsRejectedAsMalformed() async throws {
        try await TestDatabase.withFresh { db in
            let pipeline = try LedgerPipeline(db, pki: Self.trusted)
            try await pipeline.append(source: .appleNotification, body: "{}")
            try await pipeline.append(source: .client, body: #"{"signedTransaction": "not.a.jws"}"#)
            try await pipeline.drain()
            #expect(try await pipeline.count(.rejected) == 2)
            #expect(try await db.scalar("SELECT count(*) FROM event_queue WHERE reject_reason LIKE 'malformed%'") == 2)
        }
    }
}
