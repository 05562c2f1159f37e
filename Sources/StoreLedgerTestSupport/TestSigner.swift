import Crypto
package import Foundation
package import StoreLedgerSimulation

/// Signs payloads as the App Store does — compact ES256 JWS with a 3-certificate `x5c` header — using a
/// ``TestPKI``; or forges them in one of the ways a ``JWSVariant`` names.
///
/// Sign anything: a JSON dictionary (``sign(json:variant:)``), an `Encodable` value (``sign(_:variant:)``) or raw
/// bytes (``sign(payloadJSON:variant:)``). The `TestSigner+Payloads` helpers build realistic notifications,
/// transactions and renewal infos for the configured app and environment.
package struct TestSigner: Sendable {
    /// The bundle id the payload helpers use unless told otherwise.
    package static let defaultBundleID = "com.example.storeledger"
    /// The app Apple id the payload helpers use unless told otherwise.
    package static let defaultAppAppleID: Int64 = 1_234_567_890

    /// The PKI whose leaf signs.
    package let pki: TestPKI
    /// `bundleId` written by the payload helpers.
    package var bundleID: String
    /// `appAppleId` written by the payload helpers into Production notifications (Apple omits it elsewhere).
    package var appAppleID: Int64
    /// `environment` written by the payload helpers (`Sandbox`, `Production`, `Xcode`, …).
    package var environment: String

    /// Creates a signer.
    package init(
        pki: TestPKI,
        bundleID: String = TestSigner.defaultBundleID,
        appAppleID: Int64 = TestSigner.defaultAppAppleID,
        environment: String = "Sandbox"
    ) {
        self.pki = pki
        self.bundleID = bundleID
        self.appAppleID = appAppleID
        self.environment = environment
    }

    /// The genuine signer: `StoreLedgerSimulation`'s, shared with the development CA and `storeledger simulate`.
    package var appStoreSigner: AppStoreJWSSigner { AppStoreJWSSigner(chain: pki.chain) }

    /// Signs a JSON object given as a dictionary (values: strings, numbers, bools, arrays, dictionaries, `NSNull`).
    package func sign(json: [String: Any], variant: JWSVariant = .genuine) throws -> String {
        try sign(payloadJSON: JWSEncoding.json(json), variant: variant)
    }

    /// Signs an `Encodable` value, encoded with a plain `JSONEncoder` (encode dates yourself as epoch ms).
    package func sign(_ payload: some Encodable, variant: JWSVariant = .genuine) throws -> String {
        try sign(payloadJSON: JWSEncoding.json(payload), variant: variant)
    }

    /// Signs raw payload bytes: genuinely with ``appStoreSigner``, or forged as `variant` says.
    package func sign(payloadJSON: Data, variant: JWSVariant = .genuine) throws -> String {
        if case .genuine = variant {
            return try appStoreSigner.sign(payloadJSON: payloadJSON)
        }
        var header = JWSEncoding.header(x5c: pki.x5c)
        switch variant {
        case .algNone:
            header["alg"] = "none"
        case .hs256:
            header["alg"] = "HS256"
        case .twoCertificateChain:
            header["x5c"] = Array(pki.x5c.prefix(2))
        case .missingX5C:
            header["x5c"] = nil
        case .customX5C(let entries):
            header["x5c"] = entries
        case .genuine, .tamperedPayload, .flippedSignatureByte, .signedWithKey:
            break
        }
        let signingInput = try JWSEncoding.signingInput(header: JWSEncoding.json(header), payload: payloadJSON)
        let input = Data(signingInput.utf8)

        var signature: Data
        switch variant {
        case .algNone:
            signature = Data()
        case .hs256(let key):
            signature = Data(HMAC<SHA256>.authenticationCode(for: input, using: SymmetricKey(data: key)))
        case .signedWithKey(let key):
            signature = try key.signature(for: input).rawRepresentation
        default:
            signature = try pki.leafKey.signature(for: input).rawRepresentation
        }

        var payloadSegment = JWSEncoding.base64URL(payloadJSON)
        switch variant {
        case .flippedSignatureByte:
            signature[signature.startIndex + 10] ^= 0x01
        case .tamperedPayload:
            var object = (try? JSONSerialization.jsonObject(with: payloadJSON)) as? [String: Any] ?? [:]
            object["tampered"] = true
            payloadSegment = try JWSEncoding.base64URL(JWSEncoding.json(object))
        default:
            break
        }
        let headerSegment = signingInput.prefix { $0 != "." }
        return "\(headerSegment).\(payloadSegment).\(JWSEncoding.base64URL(signature))"
    }

    /// Milliseconds since 1970 for `date`, as Apple writes dates.
    package static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
