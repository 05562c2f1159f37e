package import Foundation

/// One delivery of an entitlement event to one endpoint, as the console's webhooks page lists it.
package struct WebhookDeliveryRecord: Sendable, Equatable {
    /// The webhook event's id.
    package var eventID: UUID
    /// `subscription.renewed`, …
    package var type: String
    /// The purchase's original transaction id.
    package var originalTransactionID: String
    /// The endpoint's URL.
    package var url: String
    /// `pending`, `delivered` or `failed`.
    package var state: String
    /// Attempts so far.
    package var attempts: Int
    /// The last HTTP status the endpoint answered.
    package var lastStatus: Int?
    /// The last error.
    package var lastError: String?
    /// When the event was created.
    package var createdAt: Date
    /// When it was delivered.
    package var deliveredAt: Date?
    /// When the next attempt is due (pending deliveries).
    package var nextAttemptAt: Date
}
