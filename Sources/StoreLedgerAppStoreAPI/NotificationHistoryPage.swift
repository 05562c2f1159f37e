/// One page of Get Notification History (up to 20 notifications).
package struct NotificationHistoryPage: Sendable, Codable, Equatable {
    /// Pass back as `paginationToken` for the next page.
    package var paginationToken: String?
    /// Whether another page follows.
    package var hasMore: Bool
    /// The notifications.
    package var notificationHistory: [NotificationHistoryItem]

    /// Creates a page.
    package init(paginationToken: String?, hasMore: Bool, notificationHistory: [NotificationHistoryItem]) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
