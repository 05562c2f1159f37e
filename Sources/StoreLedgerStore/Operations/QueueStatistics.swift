import Foundation

/// A snapshot of the queue for operators (`storeledger stats`).
package struct QueueStatistics: Sendable, Codable, Equatable {
    /// Events per state (every state present, zero when empty).
    package var depth: [String: Int]
    /// Whether `depth["done"]` is the planner's estimate (a queue of more than ``OperatorStore/exactDoneCountLimit``
    /// done events) rather than a count.
    package var doneIsEstimated: Bool
    /// Age in seconds of the oldest event waiting to be claimed (pending and available), nil when none: counted from
    /// its enqueue, or from an operator's last requeue or replay of it.
    package var oldestPendingAgeSeconds: Double?
    /// Events finished (done, rejected or dead) in the last minute.
    package var finishedLastMinute: Int
    /// Events appended to the log in the last minute.
    package var receivedLastMinute: Int
    /// Rejected events by reason class (the text before the first colon of the reason).
    package var rejectedByReason: [String: Int]
    /// Dead events by error class (the text before the first colon of the last error).
    package var deadByError: [String: Int]

    /// Creates a snapshot.
    package init(
        depth: [String: Int], doneIsEstimated: Bool = false, oldestPendingAgeSeconds: Double?, finishedLastMinute: Int, receivedLastMinute: Int,
        rejectedByReason: [String: Int], deadByError: [String: Int]
    ) {
        self.depth = depth
        self.doneIsEstimated = doneIsEstimated
        self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
        self.finishedLastMinute = finishedLastMinute
        self.receivedLastMinute = receivedLastMinute
        self.rejectedByReason = rejectedByReason
        self.deadByError = deadByError
    }
}
