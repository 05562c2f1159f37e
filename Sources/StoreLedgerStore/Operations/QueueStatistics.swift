import Foundation

/// A snapshot of the queue for operators (`storeledger stats`).
package struct QueueStatistics: Sendable, Codable, Equatable {
    /// Events per state (every state present, zero when empty).
    package var depth: [String: Int]
    /// Whether `depth["done"]` is the planner's estimate (a queue of more than ``OperatorStore/exactDoneCountLimit``
    /// done events) rather than a count.
    package var doneIsEstimated: Bool
    /// Age in seconds of the oldest event never requeued that waits to be claimed (pending and available), from its
    /// enqueue, nil when none: how far the ledger is behind what Apple sent.
    package var oldestPendingAgeSeconds: Double?
    /// Age in seconds of the oldest event an operator requeued or replayed that waits to be claimed, from that requeue,
    /// nil when none: operator work, which claims take only when notifications leave room.
    package var oldestRequeuedAgeSeconds: Double?
    /// Age in seconds of the oldest event never requeued that is not finished, from its enqueue, nil when none: pending
    /// whether or not it is available (one waiting out a retry's backoff counts) or processing. Where it grows while
    /// ``oldestPendingAgeSeconds`` stays small, events are retried rather than finished: processing fails.
    package var oldestUnfinishedAgeSeconds: Double?
    /// How full PostgreSQL's NOTIFY queue is (`pg_notification_queue_usage()`, 0 to 1): every append notifies the
    /// workers, so a listener that stops reading (a frozen worker whose connection stays open) fills it, and when it is
    /// full every append's `COMMIT` fails.
    package var notifyQueueUsage: Double
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
        depth: [String: Int], doneIsEstimated: Bool = false, oldestPendingAgeSeconds: Double?, oldestRequeuedAgeSeconds: Double? = nil,
        oldestUnfinishedAgeSeconds: Double? = nil, notifyQueueUsage: Double = 0, finishedLastMinute: Int, receivedLastMinute: Int,
        rejectedByReason: [String: Int],
        deadByError: [String: Int]
    ) {
        self.depth = depth
        self.doneIsEstimated = doneIsEstimated
        self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
        self.oldestRequeuedAgeSeconds = oldestRequeuedAgeSeconds
        self.oldestUnfinishedAgeSeconds = oldestUnfinishedAgeSeconds
        self.notifyQueueUsage = notifyQueueUsage
        self.finishedLastMinute = finishedLastMinute
        self.receivedLastMinute = receivedLastMinute
        self.rejectedByReason = rejectedByReason
        self.deadByError = deadByError
    }
}
