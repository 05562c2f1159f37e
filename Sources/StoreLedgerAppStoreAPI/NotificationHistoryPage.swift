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

    /// Decodes a page as Apple's own libraries read it: every field optional, so a quiet window's answer without
    /// `notificationHistory` or `hasMore` is an empty, last page rather than a malformed response that fails the run.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        paginationToken = try container.decodeIfPresent(String.self, forKey: .paginationToken)
        hasMore = try container.decodeIfPresent(Bool.self, forKey: .hasMore) ?? false
        notificationHistory = try container.decodeIfPresent([NotificationHistoryItem].self, forKey: .notificationHistory) ?? []
    }
}
