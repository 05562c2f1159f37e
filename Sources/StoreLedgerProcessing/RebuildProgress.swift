/// Where a rebuild is, for progress lines.
package struct RebuildProgress: Sendable {
    /// `replay` (the log up to the start), `catch-up` (what arrived meanwhile), `swap` (final, under lock).
    package var phase: String
    /// Events processed so far in this rebuild.
    package var processed: Int
    /// Events known to process in this phase's target (grows during catch-up).
    package var total: Int
    /// Events per second so far.
    package var rate: Double
    /// Seconds left at this rate, when known.
    package var etaSeconds: Double?

    /// `phase: processed/total events, rate/s, ETA`.
    package var line: String {
        let eta = etaSeconds.map { "ETA \(Int($0.rounded()))s" } ?? "ETA -"
        return "\(phase): \(processed)/\(total) events, \(Int(rate.rounded()))/s, \(eta)"
    }
}
