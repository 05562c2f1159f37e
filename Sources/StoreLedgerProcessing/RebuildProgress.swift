/// Where a rebuild is, for progress lines.
public struct RebuildProgress: Sendable {
    /// `replay` (the log up to the start), `catch-up` (what arrived meanwhile), `swap` (final, under lock).
    public var phase: String
    /// Events processed so far in this rebuild.
    public var processed: Int
    /// Events known to process in this phase's target (grows during catch-up).
    public var total: Int
    /// Events per second so far.
    public var rate: Double
    /// Seconds left at this rate, when known.
    public var etaSeconds: Double?

    /// `phase: processed/total events, rate/s, ETA`.
    public var line: String {
        let eta = etaSeconds.map { "ETA \(Int($0.rounded()))s" } ?? "ETA -"
        return "\(phase): \(processed)/\(total) events, \(Int(rate.rounded()))/s, \(eta)"
    }
}
