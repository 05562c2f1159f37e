import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 network written as an address (`10.1.2.3`, `::1`) or in CIDR form (`10.0.0.0/8`,
/// `2001:db8::/32`): the proxies whose `X-Forwarded-For` is believed.
package struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes (4 for IPv4, 16 for IPv6).
    let bytes: [UInt8]
    /// How many leading bits must match.
    let prefixLength: Int

    /// Parses `address` or `address/prefix`; nil when it is neither.
    package init?(_ text: String) {
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", maxSplits: 1).map(String.init)
        guard let first = parts.first, let bytes = Self.bytes(first) else { return nil }
        let maximum = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = maximum
        }
        self.bytes = bytes
    }

    /// Whether `address` (as written by a peer or in `X-Forwarded-For`) lies in this network.
    package func contains(_ address: String) -> Bool {
        guard let other = Self.bytes(address), other.count == bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(bytes, other) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if mine & mask != theirs & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// `address/prefix`.
    package var description: String {
        let address =
            bytes.count == 4
            ? bytes.map(String.init).joined(separator: ".")
            : stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(separator: ":")
        return "\(address)/\(prefixLength)"
    }

    /// The bytes of an IPv4 or IPv6 address (an IPv4-mapped IPv6 address gives its 4 IPv4 bytes); nil when `text`
    /// is not an address.
    static func bytes(_ text: String) -> [UInt8]? {
        var host = text.trimmingCharacters(in: .whitespaces)
        if host.hasPrefix("["), let end = host.firstIndex(of: "]") { host = String(host[host.index(after: host.startIndex)..<end]) }
        if let zone = host.firstIndex(of: "%") { host = String(host[..<zone]) }
        guard let address = try? SocketAddress(ipAddress: host, port: 0) else { return nil }
        switch address {
        case .v4(let v4):
            var raw = v4.address.sin_addr
            return withUnsafeBytes(of: &raw) { Array($0) }
        case .v6(let v6):
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes.prefix(10).allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes.suffix(4)) }
            return bytes
        default:
            return nil
        }
    }
}
