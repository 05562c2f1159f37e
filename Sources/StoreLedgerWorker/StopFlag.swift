import Synchronization

/// A set-once flag the claim loops read to stop claiming.
final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Whether stopping was requested.
    var isSet: Bool { value.load(ordering: .acquiring) }

    /// Requests stopping.
    func set() { value.store(true, ordering: .releasing) }
}
