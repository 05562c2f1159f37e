public import Foundation

/// One delivery of an entitlement event to one endpoint, as the console's webhooks page lists it.
public struct WebhookDeliveryRecord: Sendable, Equatable {
    /// The webhook event's id.
    public var eventID: UUID
    /// `subscription.renewed`, …
    public var type: String
    /// The purchase's original transaction id.
    public var originalTransactionID: String
    /// The endpoint's URL.
    public var url: String
    /// `pending`, `delivered` or `failed`.
    public var state: String
    /// Attempts so far.
    public var attempts: Int
    /// The last HTTP status the endpoint answered.
    public var lastStatus: Int?
    /// The last error.
    public var lastError: String?
    /// When the event was created.
    public var createdAt: Date
    /// When it was delivered.
    public var deliveredAt: Date?
    /// When the next attempt is due (pending deliveries).
    public var nextAttemptAt: Date
}
