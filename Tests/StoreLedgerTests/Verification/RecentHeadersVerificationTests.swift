import Foundation
import StoreLedgerCore
import StoreLedgerTestSupport
import Testing

@testable import StoreLedgerVerification

/// Remembered JWS headers: decoded once per distinct byte string, never standing in for different bytes, and
/// never excusing anything the rest of verification checks.
@Suite("Verification: recent headers")
struct RecentHeadersVerificationTests {
    /// Counts how often a header is really decoded.
    final class CountingDecoder {
        var calls = 0
        func decode(_ segment: ArraySlice<UInt8>) throws(VerificationError) -> CompactJWS.Header {
            calls += 1
            return try CompactJWS.decodeHeader(segment)
        }
    }

    /// A header segment for `alg` and one x5c entry.
    func segment(alg: String, certificate: String = "MIIB") -> ArraySlice<UInt8> {
        let json = #"{"alg":"\#(alg)","x5c":["\#(certificate)"]}"#
        return Array(JWSSurgery.base64URLEncode(Data(json.utf8)).utf8)[...]
    }

    @Test("the same bytes decode once; other bytes, even of the same length, decode again")
    func decodesEachDistinctSegmentOnce() throws {
        let headers = RecentHeaders(capacity: 4)
        let decoder = CountingDecoder()
        let es256 = segment(alg: "ES256")
        let first = try headers.header(for: es256, decode: decoder.decode)
        let again = try headers.header(for: Array(es256)[...], decode: decoder.decode)
        #expect(decoder.calls == 1)
        #expect(first.alg == "ES256" && again.alg == "ES256" && again.x5c == ["MIIB"])
        #expect(again.chainKey == ChainCache.Key(x5c: ["MIIB"]))

        let other = try headers.header(for: segment(alg: "ES384"), decode: decoder.decode)
        #expect(other.alg == "ES384")
        let otherCertificate = try headers.header(for: segment(alg: "ES256", certificate: "MIIC"), decode: decoder.decode)
        #expect(otherCertificate.x5c == ["MIIC"])
        #expect(decoder.calls == 3)
    }

    @Test("a header that does not decode is an error every time, and is not remembered")
    func failuresAreNotRemembered() {
        let headers = RecentHeaders(capacity: 4)
        let decoder = CountingDecoder()
        let broken = Array("not*base64".utf8)[...]
        for _ in 0..<2 {
            #expect(throws: VerificationError.self) { try headers.header(for: broken, decode: decoder.decode) }
        }
        #expect(decoder.calls == 2)
        #expect(headers.count == 0)
    }

    @Test("it holds at most its capacity, the most recent first")
    func bounded() throws {
        let headers = RecentHeaders(capacity: 2)
        let decoder = CountingDecoder()
        for alg in ["A1", "A2", "A3"] { _ = try headers.header(for: segment(alg: alg), decode: decoder.decode) }
        #expect(headers.count == 2)
        _ = try headers.header(for: segment(alg: "A3"), decode: decoder.decode)
        #expect(decoder.calls == 3)
        _ = try headers.header(for: segment(alg: "A1"), decode: decoder.decode)
        #expect(decoder.calls == 4)
    }

    @Test("a stream from one certificate decodes its header once, and a remembered header excuses no bad signature")
    func verifierDecodesAStreamsHeaderOnce() async throws {
        let pki = try TestPKI()
        let verifier = try SignedDataVerifier(
            configuration: VerifierConfiguration(
                apps: [AppIdentity(bundleID: TestSigner.defaultBundleID)],
                environment: .sandbox,
                trust: TrustConfiguration(rootCertificatesDER: [pki.rootDER])
            )
        )
        let signer = pki.signer()
        for id in 1...5 {
            _ = try await verifier.verifyTransaction(signer.signedTransaction(signer.transactionPayload(transactionID: "\(id)")))
        }
        _ = try await verifier.verifyRenewalInfo(signer.signedRenewalInfo())
        #expect(verifier.recentHeaders.count == 1)
        let forged = JWSSurgery.flippingSignatureByte(of: try signer.signedTransaction())
        let error = await #expect(throws: VerificationError.self) { try await verifier.verifyTransaction(forged) }
        #expect(error?.code == .badSignature)
    }
}
