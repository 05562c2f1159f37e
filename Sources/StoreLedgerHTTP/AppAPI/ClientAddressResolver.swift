import Foundation
package import HTTPTypes
package import NIOCore

/// Who is asking, for per-client rate limits: the peer's address, or — when the peer is one of the configured
/// trusted proxies (`TRUSTED_PROXIES`) — the nearest address in `X-Forwarded-For` that is not a trusted proxy.
/// `X-Forwarded-For` from anyone else is ignored, so a client cannot pick its own key.
package struct ClientAddressResolver: Sendable {
    /// The proxies (load balancers, ingress) whose `X-Forwarded-For` is believed.
    package var trustedProxies: [IPAddressRange]

    /// Creates a resolver; with no trusted proxies the peer's address is the client's.
    package init(trustedProxies: [IPAddressRange] = []) {
        self.trustedProxies = trustedProxies
    }

    /// The client's address as text, or nil when the connection has none (an in-process test).
    package func clientAddress(peer: SocketAddress?, headers: HTTPFields) -> String? {
        guard let peerAddress = peer?.ipAddress else { return nil }
        guard isTrusted(peerAddress) else { return peerAddress }
        let forwarded = headers[values: HTTPField.Name("X-Forwarded-For")!]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        // Right to left: each trusted proxy appended the address it received from; the first untrusted one is the client.
        // An entry that cannot be read ends the walk: what stands left of it was written by whoever sent the request,
        // not appended by a trusted proxy, so it is never believed (the nearest trusted proxy's address stands instead).
        var nearest = peerAddress
        for entry in forwarded.reversed() {
            guard let address = Self.address(entry) else { return nearest }
            if !isTrusted(address) { return address }
            nearest = address
        }
        return nearest
    }

    /// An `X-Forwarded-For` entry's address, without the port some proxies append (`203.0.113.9:51234`, Azure
    /// Application Gateway's default; `[2001:db8::1]:443`), or nil when it is no address.
    static func address(_ entry: String) -> String? {
        var text = Substring(entry)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        return IPAddressRange.bytes(String(text)) != nil ? String(text) : nil
    }

    /// The rate-limit key of an address: an IPv4 address itself, an IPv6 address's /64 network (one subscriber
    /// usually holds a whole /64, so limiting single IPv6 addresses would limit nothing).
    package static func limitKey(_ address: String?) -> String {
        guard let address, let bytes = IPAddressRange.bytes(address) else { return "unknown" }
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        let network = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return network.joined(separator: ":") + "::/64"
    }

    private func isTrusted(_ address: String) -> Bool {
        trustedProxies.contains { $0.contains(address) }
    }
}
