/// When a failed event is tried again, and when it is given up as `dead`.
///
/// The delay after attempt *n* fails is `n⁴` seconds (1 s, 16 s, 81 s, 256 s, … about 36 h after the
/// 19th), capped at ``maximumDelay`` and multiplied by a uniform jitter in `1 ± jitter` so that a
/// burst of failures does not come back as a burst. After ``maximumAttempts`` attempts the event is
/// `dead` (about 6.5 days after its first failure with the defaults: the delays after attempts 1–19 add up to 562,666 s).
package struct RetryPolicy: Sendable, Hashable {
    /// Attempts before an event is `dead` (default 20).
    package var maximumAttempts: Int
    /// The jitter fraction (default 0.1, i.e. ±10 %).
    package var jitter: Double
    /// The longest delay, in seconds, before jitter (default 2 days).
    package var maximumDelay: Double

    /// Creates a policy.
    package init(maximumAttempts: Int = 20, jitter: Double = 0.1, maximumDelay: Double = 172_800) {
        self.maximumAttempts = maximumAttempts
        self.jitter = jitter
        self.maximumDelay = maximumDelay
    }

    /// The delay before the next attempt, without jitter, after attempt `attempt` (1-based) failed.
    package func baseDelay(afterAttempt attempt: Int) -> Double {
        let n = Double(max(attempt, 1))
        return min(n * n * n * n, maximumDelay)
    }

    /// The jittered delay before the next attempt, using `generator` for the jitter.
    package func delay(afterAttempt attempt: Int, using generator: inout some RandomNumberGenerator) -> Double {
        let factor = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter), using: &generator) : 1
        return baseDelay(afterAttempt: attempt) * factor
    }

    /// The jittered delay before the next attempt, using the system generator.
    package func delay(afterAttempt attempt: Int) -> Double {
        var generator = SystemRandomNumberGenerator()
        return delay(afterAttempt: attempt, using: &generator)
    }

    /// Whether a failure of attempt `attempt` exhausts the policy (the event becomes `dead`).
    package func isExhausted(afterAttempt attempt: Int) -> Bool { attempt >= maximumAttempts }
}
