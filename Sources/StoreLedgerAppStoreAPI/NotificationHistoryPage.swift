/// One page of Get Notification History (up to 20 notifications).
public struct NotificationHistoryPage: Sendable, Codable, Equatable {
    /// Pass back as `paginationToken` for the next page.
    public var paginationToken: String?
    /// Whether another page follows.
    public var hasMore: Bool
    /// The notifications.
    public var notificationHistory: [NotificationHistoryItem]

    /// Creates a page.
    public init(paginationToken: String?, hasMore: Bool, notificationHistory: [NotificationHistoryItem]) {
        self.paginationToken = paginationToken
        self.hasMore = hasMore
        self.notificationHistory = notificationHistory
    }
}
