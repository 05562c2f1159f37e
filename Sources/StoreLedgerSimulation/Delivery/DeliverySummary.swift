/// Totals of a simulation run.
package struct DeliverySummary: Hashable, Sendable, CustomStringConvertible {
    /// POSTs attempted.
    package var sent = 0
    /// POSTs answered 2xx.
    package var succeeded = 0
    /// POSTs that failed (non-2xx or no response).
    package var failed = 0
    /// Planned POSTs not attempted because the run stopped early.
    package var unsent = 0
    /// POSTs that were resends of an earlier notification.
    package var duplicates = 0
    /// Distinct notifications sent.
    package var notifications = 0
    /// Seconds from the first POST to the last answer.
    package var elapsedSeconds = 0.0

    /// An empty summary.
    package init() {}

    /// `12 POSTs (10 notifications, 2 resent): 12 ok, 0 failed in 0.31 s`, plus `, 5 not sent` after a stop.
    package var description: String {
        let seconds = (elapsedSeconds * 100).rounded() / 100
        return "\(sent) POSTs (\(notifications) notifications, \(duplicates) resent): "
            + "\(succeeded) ok, \(failed) failed" + (unsent > 0 ? ", \(unsent) not sent" : "") + " in \(seconds) s"
    }
}
