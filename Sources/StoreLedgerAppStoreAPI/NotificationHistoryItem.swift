/// A notification Apple sent (or tried to), with its delivery attempts.
package struct NotificationHistoryItem: Sendable, Codable, Equatable {
    /// One delivery attempt.
    package struct SendAttempt: Sendable, Codable, Equatable {
        /// When (epoch ms).
        package var attemptDate: Int64?
        /// `SUCCESS`, `TIMED_OUT`, `NO_RESPONSE`, …
        package var sendAttemptResult: String?

        /// Creates an attempt.
        package init(attemptDate: Int64?, sendAttemptResult: String?) {
            self.attemptDate = attemptDate
            self.sendAttemptResult = sendAttemptResult
        }
    }

    /// The notification as Apple signed it (the receiver's `signedPayload`).
    package var signedPayload: String
    /// Its delivery attempts.
    package var sendAttempts: [SendAttempt]?

    /// Creates an item.
    package init(signedPayload: String, sendAttempts: [SendAttempt]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
