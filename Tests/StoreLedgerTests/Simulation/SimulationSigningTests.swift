import Foundation
import StoreLedgerCore
import StoreLedgerSimulation
import StoreLedgerTestSupport
import StoreLedgerVerification
import Testing
import X509

/// What the simulator signs is genuine App Store-shaped data for the development CA, and nothing else trusts it.
@Suite("Simulation: signing with the development CA")
struct SimulationSigningTests {
    /// The first notification of a renewals lifecycle, signed by `ca`.
    func firstNotification(_ ca: DevelopmentCertificateAuthority) throws -> SimulatedNotification {
        let setup = LifecycleSetup(
            originalTransactionID: "2000000000001000", start: Timestamp(Date()), bundleID: "com.example.storeledger",
            appAppleID: SimulationFixtures.appAppleID)
        let facts = SimulatedLifecycle.renewals.facts(setup, endingAt: Timestamp(Date()))
        return try #require(try NotificationSigner(signer: ca.signer()).signNotifications(in: facts).first)
    }

    @Test("a simulated notification verifies against the development CA's root, nested payloads included")
    func verifiesWithDevelopmentRoot() async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let notification = try firstNotification(ca)
            let verified = try await SimulationFixtures.verifier(trusting: ca.rootDER).verifyNotification(notification.signedPayload)
            #expect(verified.claims.notificationType == "SUBSCRIBED")
            #expect(verified.claims.subtype == "INITIAL_BUY")
            #expect(verified.claims.notificationUUID == notification.notificationUUID?.rawValue)
            #expect(verified.transaction != nil)
            #expect(verified.renewalInfo != nil)
        }
    }

    @Test("the same notification is rejected as untrustedChain under the default trust (Apple Root CA - G3)")
    func rejectedByDefaultTrust() async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let notification = try firstNotification(ca)
            let verifier = try SimulationFixtures.verifier(trusting: nil)
            let error = await #expect(throws: VerificationError.self) {
                try await verifier.verifyNotification(notification.signedPayload)
            }
            #expect(error?.code == .untrustedChain)
        }
    }

    @Test("the development CA reloaded from disk signs what the first instance's root verifies")
    func reloadedCASigns() async throws {
        try await SimulationFixtures.withCertificateAuthority { ca in
            let reloaded = try DevelopmentCertificateAuthority.load(from: ca.directory)
            let notification = try firstNotification(reloaded)
            _ = try await SimulationFixtures.verifier(trusting: ca.rootDER).verifyNotification(notification.signedPayload)
        }
    }

    @Test("the header is App Store-shaped: ES256 and x5c of leaf, intermediate, root with Apple's OIDs")
    func headerShape() throws {
        let chain = try SigningChain()
        let token = try AppStoreJWSSigner(chain: chain).sign(json: ["signedDate": 1_735_689_600_000])
        let segments = token.split(separator: ".")
        #expect(segments.count == 3)
        var base64 = segments[0].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let headerJSON = try #require(Data(base64Encoded: base64))
        let header = try #require(try JSONSerialization.jsonObject(with: headerJSON) as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["x5c"] as? [String] == chain.x5c)
        #expect(chain.leaf.extensions[oid: SigningChain.leafMarkerOID] != nil)
        #expect(chain.intermediate.extensions[oid: SigningChain.intermediateMarkerOID] != nil)
    }

    @Test("the test PKI mints and signs with the same code: its genuine output is the simulator's signer's")
    func testPKISharesTheSigner() async throws {
        let pki = try TestPKI()
        #expect(pki.chain.rootDER == pki.rootDER)
        let token = try pki.signer().sign(json: ["hello": "world"])
        let header = token.split(separator: ".")[0]
        let shared = try pki.signer().appStoreSigner.sign(json: ["hello": "world"])
        #expect(shared.split(separator: ".")[0] == header)
        #expect(shared.split(separator: ".")[1] == token.split(separator: ".")[1])
    }
}
