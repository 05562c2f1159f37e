import Crypto
package import Foundation

/// Signs payloads as the App Store does: a compact JWS, ES256 by a ``SigningChain``'s leaf, with the chain's
/// three certificates (leaf, intermediate, root; base64 DER) in the `x5c` header.
package struct AppStoreJWSSigner: Sendable {
    /// The chain whose leaf signs and whose certificates go into `x5c`.
    package let chain: SigningChain

    /// Creates a signer for a chain.
    package init(chain: SigningChain) {
        self.chain = chain
    }

    /// Signs raw payload bytes (JSON).
    package func sign(payloadJSON: Data) throws -> String {
        let header = try JWSEncoding.json(JWSEncoding.header(x5c: chain.x5c))
        let signingInput = JWSEncoding.signingInput(header: header, payload: payloadJSON)
        let signature = try chain.leafKey.signature(for: Data(signingInput.utf8)).rawRepresentation
        return JWSEncoding.compact(signingInput: signingInput, signature: signature)
    }

    /// Signs a JSON object given as a dictionary (values: strings, numbers, bools, arrays, dictionaries, `NSNull`).
    package func sign(json: [String: Any]) throws -> String {
        try sign(payloadJSON: JWSEncoding.json(json))
    }

    /// Signs an `Encodable` value (e.g. a `TransactionPayload`, `RenewalInfoPayload` or `NotificationPayload`).
    package func sign(_ payload: some Encodable) throws -> String {
        try sign(payloadJSON: JWSEncoding.json(payload))
    }
}
