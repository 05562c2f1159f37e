/// How an event reached the log. Every source goes through the same handler.
public enum EventSource: String, Sendable, Hashable, Codable, CaseIterable {
    /// Apple POSTed an App Store Server Notification to the receiver.
    case appleNotification = "apple_notification"
    /// An app posted a StoreKit signed transaction (or a legacy receipt resolved to one).
    case client
    /// StoreLedger asked the App Store Server API.
    case serverAPI = "server_api"
    /// Get Notification History found a notification that was never received.
    case reconciliation
}
