import Crypto
package import Foundation
import JWTKit
import StoreLedgerCore
import SwiftASN1
@_spi(FixedExpiryValidationTime) import X509

/// A JWS whose origin has been established (or which was accepted as local test data).
struct AuthenticatedJWS: Sendable {
    /// The parsed token.
    let jws: CompactJWS
    /// Its payload's claims.
    let claims: SignedPayloadClaims
    /// The payload read into its model, when the claims were read from it (``DecodedPayload``).
    let decoded: DecodedPayload?
    /// When Apple signed the payload, if it says: its `signedDate`, or an app transaction's `receiptCreationDate`.
    let signedDate: Date?
    /// The payload's environment, from where this kind of payload states it.
    let environment: String?
    /// Accepted as Xcode / LocalTesting data without chain or signature checks.
    let isLocalTestData: Bool
    /// SHA-256 of the signing input (`header.payload` as received): what the signature check hashed, and for local
    /// test data, hashed for this.
    let signingInputDigest: SHA256.Digest

    /// The public result for this JWS.
    var result: VerifiedSignedData {
        VerifiedSignedData(
            signedData: jws.token,
            payloadJSON: jws.payloadJSON,
            environment: environment.map(AppStoreEnvironment.init(rawValue:)),
            signedDate: signedDate,
            isLocalTestData: isLocalTestData,
            decoded: decoded
        )
    }
}

extension SignedDataVerifier {
    /// Parses `token`, then either accepts it as allowed local test data or checks header, chain and signature.
    ///
    /// - Parameters:
    ///   - kind: The model to read the payload into, its claims read from it (``DecodedPayload``); nil, or a payload
    ///     of another shape, reads the claims alone through `JSONDecoder`.
    ///   - environmentOf: Where this kind of payload states its environment.
    func authenticate(
        _ token: String,
        as kind: DecodedPayload.Kind? = nil,
        environmentOf: (SignedPayloadClaims) -> String?
    ) async throws(VerificationError) -> AuthenticatedJWS {
        let jws = try CompactJWS(token, recentHeaders: recentHeaders)
        let decoded = kind.flatMap { DecodedPayload.plain($0, json: jws.payloadJSON) }
        let claims: SignedPayloadClaims
        if let decoded {
            claims = SignedPayloadClaims(decoded)
        } else {
            claims = try jws.claims()
        }
        let signedDate = claims.signingDate.map { Date(timeIntervalSince1970: $0 / 1000) }
        let stated = environmentOf(claims)

        if let environment = stated.map(AppStoreEnvironment.init(rawValue:)), environment.isLocalTestEnvironment {
            guard configuration.allowXcodeEnvironment else {
                throw .untrustedChain(
                    "signed for \(environment), whose data is signed locally by Xcode, not by the App Store; "
                        + "it is accepted only when Xcode data is explicitly allowed "
                        + "(ALLOW_XCODE_DATA=true, allowXcodeEnvironment, storeledger verify --allow-xcode)"
                )
            }
            return AuthenticatedJWS(
                jws: jws,
                claims: claims,
                decoded: decoded,
                signedDate: signedDate,
                environment: stated,
                isLocalTestData: true,
                signingInputDigest: SHA256.hash(data: jws.signingInput)
            )
        }

        guard let alg = jws.header.alg else {
            throw .malformed("the JWS header has no alg")
        }
        guard alg == "ES256" else {
            throw .malformed("unsupported algorithm '\(alg)': App Store data is signed with ES256 only")
        }
        guard let x5c = jws.header.x5c, let key = jws.header.chainKey else {
            throw .malformed("the JWS header has no x5c certificate chain")
        }
        guard x5c.count == 3 else {
            throw .malformed("the x5c header must hold exactly 3 certificates, it holds \(x5c.count)")
        }
        let validationTime = signedDate ?? currentDate()
        let chain: ChainCache.Entry
        if let cached = chainCache.lookup(key, at: validationTime) {
            chain = cached
        } else {
            var ders: [Data] = []
            var certificates: [Certificate] = []
            for (index, entry) in x5c.enumerated() {
                guard let der = Data(base64Encoded: entry) else {
                    throw .malformed("x5c[\(index)] is not base64")
                }
                do {
                    certificates.append(try Certificate(derEncoded: Array(der)))
                } catch {
                    throw .malformed("x5c[\(index)] is not a DER X.509 certificate")
                }
                ders.append(der)
            }
            chain = try await validatedChain(
                key: key,
                leaf: certificates[0],
                intermediate: certificates[1],
                at: validationTime
            )
        }
        let digest = try checkSignature(of: jws, with: chain.leafKey)
        return AuthenticatedJWS(
            jws: jws,
            claims: claims,
            decoded: decoded,
            signedDate: signedDate,
            environment: stated,
            isLocalTestData: false,
            signingInputDigest: digest
        )
    }

    /// Checks a (leaf, intermediate) pair as for a JWS `x5c` header, without a signature: chains to a configured
    /// root at `date`, Apple's marker OIDs, CA intermediate. Uses and fills the chain cache.
    ///
    /// - Throws: ``VerificationError/Code/malformed`` for unreadable DER, ``VerificationError/Code/untrustedChain``
    ///   otherwise.
    package func validateCertificateChain(
        leafDER: Data,
        intermediateDER: Data,
        at date: Date
    ) async throws(VerificationError) {
        let leaf: Certificate
        let intermediate: Certificate
        do {
            leaf = try Certificate(derEncoded: Array(leafDER))
            intermediate = try Certificate(derEncoded: Array(intermediateDER))
        } catch {
            throw .malformed("not a DER X.509 certificate: \(error)")
        }
        let key = ChainCache.Key(leafDER: leafDER, intermediateDER: intermediateDER)
        if chainCache.lookup(key, at: date) != nil { return }
        _ = try await validatedChain(key: key, leaf: leaf, intermediate: intermediate, at: date)
    }

    /// Validates (leaf, intermediate) at `date` with jwt-kit's `X5CVerifier` and caches the result under `key`
    /// (callers look the cache up first).
    ///
    /// `x5c[2]` is deliberately not offered to the chain builder: the only certificates it may use besides the
    /// configured roots are the leaf and `x5c[1]`.
    private func validatedChain(
        key: ChainCache.Key,
        leaf: Certificate,
        intermediate: Certificate,
        at date: Date
    ) async throws(VerificationError) -> ChainCache.Entry {
        chainCache.recordChainValidation()

        let result: CertificateValidationResult
        do {
            result = try await x5cVerifier.verifyChain(certificates: [leaf, intermediate]) {
                AppleChainPolicy(intermediate: intermediate)
                RFC5280Policy(fixedExpiryValidationTime: date)
            }
        } catch {
            throw .untrustedChain("the x5c chain could not be validated: \(error)")
        }
        switch result {
        case .couldNotValidate(let failures):
            throw .untrustedChain(
                describeFailure(failures, leaf: leaf, intermediate: intermediate, date: date)
            )
        case .validCertificate(let validated):
            guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
                throw .badSignature("the leaf's key is not a P-256 key, so it cannot have made an ES256 signature")
            }
            let entry = ChainCache.Entry(
                validFrom: validated.map(\.notValidBefore).max() ?? date,
                validUntil: validated.map(\.notValidAfter).min() ?? date,
                leafKey: leafKey
            )
            chainCache.insert(entry, for: key)
            return entry
        }
    }

    /// Checks the ES256 signature (RFC 7518 §3.4: the 64-byte `R || S` over SHA-256 of the ASCII
    /// `header.payload`) with the leaf's key, through swift-crypto's P-256 — the same call jwt-kit's ES256 makes,
    /// without re-splitting and re-decoding a token already parsed. Returns the digest it checked.
    private func checkSignature(of jws: CompactJWS, with key: P256.Signing.PublicKey) throws(VerificationError) -> SHA256.Digest {
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try P256.Signing.ECDSASignature(rawRepresentation: jws.signature)
        } catch {
            throw .badSignature("the signature is not a valid ES256 signature (\(jws.signature.count) bytes, not 64)")
        }
        let digest = SHA256.hash(data: jws.signingInput)
        guard key.isValidSignature(signature, for: digest) else {
            throw .badSignature("the ES256 signature does not match the signed header and payload")
        }
        return digest
    }

    /// A precise reason for a chain that did not validate.
    private func describeFailure(
        _ failures: [CertificateValidationResult.PolicyFailure],
        leaf: Certificate,
        intermediate: Certificate,
        date: Date
    ) -> String {
        let at = "at \(date.formatted(.iso8601))"
        var reasons: [String] = []
        for failure in failures {
            let reason = failure.policyFailureReason.description
            if !reasons.contains(reason) { reasons.append(reason) }
        }
        if !reasons.isEmpty {
            return "the x5c chain was rejected \(at): " + reasons.joined(separator: "; ")
        }
        if !intermediate.publicKey.isValidSignature(leaf.signature, for: leaf) {
            return "x5c[0] is not signed by x5c[1]"
        }
        let roots = configuration.trust.rootCertificates
        let issuedByRoot = roots.contains { root in
            root.subject == intermediate.issuer
                && root.publicKey.isValidSignature(intermediate.signature, for: intermediate)
        }
        if !issuedByRoot {
            return "x5c[1] (\(intermediate.subject), issued by \(intermediate.issuer)) is not issued by a trusted root "
                + "(trusted: \(configuration.trust.rootSubjects.joined(separator: " | ")))"
        }
        return "no chain from x5c[0] through x5c[1] to a trusted root \(at)"
    }
}
