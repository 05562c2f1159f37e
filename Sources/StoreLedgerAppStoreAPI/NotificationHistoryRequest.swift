/// The body of Get Notification History: a window (epoch milliseconds; 180 days back in production, 30 in
/// sandbox) and optional filters.
package struct NotificationHistoryRequest: Sendable, Codable, Equatable {
    /// Window start (epoch ms).
    package var startDate: Int64
    /// Window end (epoch ms).
    package var endDate: Int64
    /// Only this notification type.
    package var notificationType: String?
    /// Only this subtype.
    package var notificationSubtype: String?
    /// Only this transaction's notifications.
    package var transactionId: String?
    /// Only notifications Apple failed to deliver.
    package var onlyFailures: Bool?

    /// Creates a request.
    package init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}
