import Crypto
package import Foundation

/// The signature on outgoing webhooks: header `StoreLedger-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over
/// `"<t>.<body>"` with the endpoint's secret, as Stripe signs; receivers recompute it and reject old timestamps.
package enum WebhookSignature {
    /// The header's name.
    package static let headerName = "StoreLedger-Signature"

    /// The header value for `body` signed at `timestamp` with `secret`, and with `previousSecret` too while a rotation
    /// overlaps (a second `v1=`: a receiver holding either secret finds its signature).
    package static func header(body: Data, secret: String, previousSecret: String? = nil, timestamp: Int64) -> String {
        ([secret] + [previousSecret].compactMap { $0 }).reduce("t=\(timestamp)") { header, key in
            header + ",v1=" + hex(body: body, secret: key, timestamp: timestamp)
        }
    }

    /// Whether `header` is a valid signature of `body` with `secret`, made within `tolerance` seconds of `now`.
    package static func isValid(_ header: String, body: Data, secret: String, now: Date = Date(), tolerance: TimeInterval = 300) -> Bool {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) } else if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(now.timeIntervalSince1970 - Double(timestamp)) <= tolerance else { return false }
        let expected = hex(body: body, secret: secret, timestamp: timestamp)
        return signatures.contains { constantTimeEqual($0, expected) }
    }

    private static func hex(body: Data, secret: String, timestamp: Int64) -> String {
        var message = Data("\(timestamp).".utf8)
        message.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    private static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
