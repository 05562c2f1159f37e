import Foundation
import StoreLedgerSimulation
import Testing

/// The simulator only talks to this machine unless told otherwise.
@Suite("Simulation: delivery target")
struct SimulationDeliveryTests {
    @Test(
        "loopback URLs are accepted",
        arguments: [
            "http://127.0.0.1:8080/notifications/apple/sandbox", "http://localhost:8080/x", "https://LOCALHOST/x",
            "http://127.1.2.3/x", "http://[::1]:8080/x", "http://[0:0:0:0:0:0:0:1]/x", "http://api.localhost/x",
        ])
    func loopbackAccepted(_ url: String) throws {
        let target = try DeliveryTarget(url)
        #expect(target.isLoopback)
        #expect(target.url.absoluteString == url)
    }

    @Test(
        "other hosts are refused unless remote delivery is allowed",
        arguments: [
            "http://example.com/notifications/apple", "http://10.0.0.1:8080/x", "http://128.0.0.1/x",
            "http://[::2]/x", "http://127.0.0.1.example.com/x", "http://0.0.0.0:8080/x", "http://localhost.example.com/x",
        ])
    func remoteRefused(_ url: String) throws {
        let error = #expect(throws: SimulationError.self) { try DeliveryTarget(url) }
        #expect(error?.code == .remoteTargetRefused)
        let allowed = try DeliveryTarget(url, allowRemote: true)
        #expect(!allowed.isLoopback)
    }

    @Test("anything but an http(s) URL with a host is invalid", arguments: ["ftp://127.0.0.1/x", "127.0.0.1:8080", "http://", "not a url"])
    func invalidTargets(_ url: String) {
        let error = #expect(throws: SimulationError.self) { try DeliveryTarget(url, allowRemote: true) }
        #expect(error?.code == .invalidTarget)
    }
}
