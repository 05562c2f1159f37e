import Synchronization

/// When each endpoint of Apple's App Store Server API may be asked again, as its last 429's `Retry-After` said; one per
/// client, shared by its copies. Apple limits each endpoint per app and hour, and every early ask is refused (and may
/// count): a call made before the time waits for it when it is within the client's longest backoff, and otherwise is
/// refused at once by the client, without asking Apple.
final class RetryAfterGate: Sendable {
    private let notBefore = Mutex<[String: ContinuousClock.Instant]>([:])

    /// The instant `endpoint` may be asked again, if that is still ahead.
    func closedUntil(_ endpoint: String, now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant? {
        notBefore.withLock { gates in
            guard let until = gates[endpoint] else { return nil }
            if until > now { return until }
            gates[endpoint] = nil
            return nil
        }
    }

    /// Keeps `endpoint` closed until `instant` (or later, if it already was).
    func close(_ endpoint: String, until instant: ContinuousClock.Instant) {
        notBefore.withLock { gates in gates[endpoint] = max(gates[endpoint] ?? instant, instant) }
    }
}
