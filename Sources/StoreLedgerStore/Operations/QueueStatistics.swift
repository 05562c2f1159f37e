import Foundation

/// A snapshot of the queue for operators (`storeledger stats`).
package struct QueueStatistics: Sendable, Codable, Equatable {
    /// Events per state (every state present, zero when empty).
    package var depth: [String: Int]
    /// Age in seconds of the oldest event waiting to be claimed (pending and available), nil when none.
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
        depth: [String: Int], oldestPendingAgeSeconds: Double?, finishedLastMinute: Int, receivedLastMinute: Int,
        rejectedByReason: [String: Int], deadByError: [String: Int]
    ) {
        self.depth = depth
        self.oldestPendingAgeSeconds = oldestPendingAgeSeconds
        self.finishedLastMinute = finishedLastMinute
        self.receivedLastMinute = receivedLastMinute
        self.rejectedByReason = rejectedByReason
        self.deadByError = deadByError
    }
}
