public import Foundation
public import NIOCore

/// Everything known about one event (`storeledger inspect`): the raw body, how it arrived, its queue state and
/// every failed attempt and operator action.
public struct EventInspection: Sendable {
    /// One failed attempt.
    public struct Failure: Sendable {
        /// The attempt number.
        public var attempt: Int
        /// When it failed.
        public var failedAt: Date
        /// The worker that held it.
        public var worker: String?
        /// retry, dead, rejected or lease_expired.
        public var outcome: String
        /// The error.
        public var error: String
    }

    /// One operator action.
    public struct Action: Sendable {
        /// requeue or replay.
        public var action: String
        /// The state it was in before.
        public var previousState: String
        /// Who asked.
        public var requestedBy: String
        /// Why.
        public var reason: String
        /// When.
        public var performedAt: Date
    }

    /// The event id.
    public var id: Int64
    /// When it was received.
    public var receivedAt: Date
    /// How it arrived.
    public var source: String
    /// The route's environment hint.
    public var environmentHint: String?
    /// The route.
    public var route: String?
    /// The body exactly as received.
    public var body: ByteBuffer
    /// The request id.
    public var requestID: String?
    /// The signed-in user who posted it.
    public var userID: String?
    /// The queue state.
    public var state: String
    /// Attempts so far.
    public var attempts: Int
    /// Why it was rejected.
    public var rejectReason: String?
    /// The last error.
    public var lastError: String?
    /// When it finished.
    public var finishedAt: Date?
    /// The notification it delivered, if it was one and verified.
    public var notificationUUID: String?
    /// Failed attempts, oldest first.
    public var failures: [Failure]
    /// Operator actions, oldest first.
    public var actions: [Action]
}
