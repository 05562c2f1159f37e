/// One POST the simulator will make: a signed notification, sent for the first time or again (as Apple retries,
/// with the same `notificationUUID` and the same bytes).
package struct PlannedDelivery: Hashable, Sendable {
    /// The notification to send.
    package let notification: SimulatedNotification
    /// Whether this is a resend of a notification delivered earlier in the plan.
    package let isDuplicate: Bool

    /// Creates a planned delivery.
    package init(notification: SimulatedNotification, isDuplicate: Bool) {
        self.notification = notification
        self.isDuplicate = isDuplicate
    }
}
