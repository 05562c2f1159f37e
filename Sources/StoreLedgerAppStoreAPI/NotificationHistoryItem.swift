/// A notification Apple sent (or tried to), with its delivery attempts.
public struct NotificationHistoryItem: Sendable, Codable, Equatable {
    /// One delivery attempt.
    public struct SendAttempt: Sendable, Codable, Equatable {
        /// When (epoch ms).
        public var attemptDate: Int64?
        /// `SUCCESS`, `TIMED_OUT`, `NO_RESPONSE`, …
        public var sendAttemptResult: String?

        /// Creates an attempt.
        public init(attemptDate: Int64?, sendAttemptResult: String?) {
            self.attemptDate = attemptDate
            self.sendAttemptResult = sendAttemptResult
        }
    }

    /// The notification as Apple signed it (the receiver's `signedPayload`).
    public var signedPayload: String
    /// Its delivery attempts.
    public var sendAttempts: [SendAttempt]?

    /// Creates an item.
    public init(signedPayload: String, sendAttempts: [SendAttempt]?) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
