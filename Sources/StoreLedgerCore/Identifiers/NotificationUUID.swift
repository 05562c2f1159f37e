/// The unique id of one App Store Server Notification (`notificationUUID`); retries of a notification keep it.
public struct NotificationUUID: StringIdentifier {
    /// The identifier exactly as Apple sent it.
    public let rawValue: String

    /// Wraps a raw identifier string.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}
