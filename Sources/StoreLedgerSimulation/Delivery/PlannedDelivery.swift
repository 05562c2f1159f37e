/// One POST the simulator will make: a signed notification, sent for the first time or again (as Apple retries,
/// with the same `notificationUUID` and the same bytes).
public struct PlannedDelivery: Hashable, Sendable {
    /// The notification to send.
    public let notification: SimulatedNotification
    /// Whether this is a resend of a notification delivered earlier in the plan.
    public let isDuplicate: Bool

    /// Creates a planned delivery.
    public init(notification: SimulatedNotification, isDuplicate: Bool) {
        self.notification = notification
        self.isDuplicate = isDuplicate
    }
}
