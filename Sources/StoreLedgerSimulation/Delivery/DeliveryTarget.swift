package import Foundation

/// Where simulated notifications go: an `http(s)` URL on this machine (`localhost`, `127.0.0.0/8`, `::1`) unless
/// remote delivery is explicitly allowed, so signed test data is not sprayed at a real ledger by mistake.
package struct DeliveryTarget: Hashable, Sendable, CustomStringConvertible {
    /// The URL notifications are POSTed to.
    package let url: URL
    /// Whether the host is a loopback address.
    package let isLoopback: Bool

    /// Parses and checks a target URL.
    ///
    /// - Throws: `invalidTarget` for anything but an `http`/`https` URL with a host; `remoteTargetRefused` for a
    ///   host that is not loopback when `allowRemote` is false.
    package init(_ text: String, allowRemote: Bool = false) throws(SimulationError) {
        guard let components = URLComponents(string: text), let url = components.url,
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty
        else {
            throw SimulationError(.invalidTarget, "'\(text)' is not an http(s) URL with a host")
        }
        self.url = url
        self.isLoopback = Self.isLoopback(host: host)
        if !isLoopback, !allowRemote {
            throw SimulationError(
                .remoteTargetRefused,
                "\(host) is not a loopback address (localhost, 127.0.0.0/8, ::1); pass --allow-remote to send there")
        }
    }

    /// Whether `host` names this machine's loopback interface: `localhost` (and `*.localhost`), an IPv4 address
    /// in `127.0.0.0/8`, or `::1` (brackets allowed). Other names are not resolved: they count as remote.
    package static func isLoopback(host: String) -> Bool {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host = String(host.dropLast()) }
        if host == "localhost" || host.hasSuffix(".localhost") { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        if octets.count == 4, octets.allSatisfy({ UInt8($0) != nil }) {
            return octets[0] == "127"
        }
        if host.contains(":") {
            return Self.isIPv6Loopback(host)
        }
        return false
    }

    /// `::1` in any of its spellings (`0:0:0:0:0:0:0:1`, `::0:1`, …).
    private static func isIPv6Loopback(_ host: String) -> Bool {
        let halves = host.components(separatedBy: "::")
        guard halves.count <= 2 else { return false }
        func groups(_ text: String) -> [UInt16]? {
            if text.isEmpty { return [] }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            let values = parts.compactMap { $0.count <= 4 ? UInt16($0, radix: 16) : nil }
            return values.count == parts.count ? values : nil
        }
        guard let head = groups(halves[0]) else { return false }
        var all = head
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count < 8 else { return false }
            all += Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        }
        return all == [0, 0, 0, 0, 0, 0, 0, 1]
    }

    /// The URL.
    package var description: String { url.absoluteString }
}
