package import Foundation
package import NIOCore

/// Everything known about one event (`storeledger inspect`): the raw body, how it arrived, its queue state and
/// every failed attempt and operator action.
package struct EventInspection: Sendable {
    /// One failed attempt.
    package struct Failure: Sendable {
        /// The attempt number.
        package var attempt: Int
        /// When it failed.
        package var failedAt: Date
        /// The worker that held it.
        package var worker: String?
        /// retry, dead, rejected or lease_expired.
        package var outcome: String
        /// The error.
        package var error: String
    }

    /// One operator action.
    package struct Action: Sendable {
        /// requeue or replay.
        package var action: String
        /// The state it was in before.
        package var previousState: String
        /// Who asked.
        package var requestedBy: String
        /// Why.
        package var reason: String
        /// When.
        package var performedAt: Date
    }

    /// The event id.
    package var id: Int64
    /// When it was received.
    package var receivedAt: Date
    /// How it arrived; nil when its month of the log was detached (archived).
    package var source: String?
    /// The route's environment hint.
    package var environmentHint: String?
    /// The route.
    package var route: String?
    /// The body exactly as received; nil when its month of the log was detached (archived).
    package var body: ByteBuffer?
    /// The request id.
    package var requestID: String?
    /// The signed-in user who posted it.
    package var userID: String?
    /// The queue state; nil when its queue row was deleted (finished rows pruned, as operations.md allows).
    package var state: String?
    /// Attempts so far (0 without a queue row).
    package var attempts: Int
    /// Why it was rejected.
    package var rejectReason: String?
    /// The last error.
    package var lastError: String?
    /// When it finished.
    package var finishedAt: Date?
    /// The notification it delivered, if it was one and verified.
    package var notificationUUID: String?
    /// Failed attempts, oldest first.
    package var failures: [Failure]
    /// Operator actions, oldest first.
    package var actions: [Action]
}
