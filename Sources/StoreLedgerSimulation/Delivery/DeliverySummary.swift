/// Totals of a simulation run.
public struct DeliverySummary: Hashable, Sendable, CustomStringConvertible {
    /// POSTs attempted.
    public var sent = 0
    /// POSTs answered 2xx.
    public var succeeded = 0
    /// POSTs that failed (non-2xx or no response).
    public var failed = 0
    /// Planned POSTs not attempted because the run stopped early.
    public var unsent = 0
    /// POSTs that were resends of an earlier notification.
    public var duplicates = 0
    /// Distinct notifications sent.
    public var notifications = 0
    /// Seconds from the first POST to the last answer.
    public var elapsedSeconds = 0.0

    /// An empty summary.
    public init() {}

    /// `12 POSTs (10 notifications, 2 resent): 12 ok, 0 failed in 0.31 s`, plus `, 5 not sent` after a stop.
    public var description: String {
        let seconds = (elapsedSeconds * 100).rounded() / 100
        return "\(sent) POSTs (\(notifications) notifications, \(duplicates) resent): "
            + "\(succeeded) ok, \(failed) failed" + (unsent > 0 ? ", \(unsent) not sent" : "") + " in \(seconds) s"
    }
}
