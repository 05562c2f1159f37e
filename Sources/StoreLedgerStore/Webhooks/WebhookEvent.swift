package import Foundation

/// A normalized entitlement change to deliver to the host app.
package struct WebhookEvent: Sendable, Equatable {
    /// Stable id (derived from the change), so receivers can deduplicate.
    package var id: UUID
    /// `subscription.started`, `subscription.renewed`, `subscription.expired`, `purchase.refunded`, …
    package var type: String
    /// The app account token on the purchase.
    package var appAccountToken: String?
    /// The product.
    package var productID: String?
    /// `Production`, `Sandbox` or `Xcode`.
    package var environment: String
    /// The purchase's original transaction id.
    package var originalTransactionID: String
    /// The latest transaction id.
    package var transactionID: String?
    /// Whether it entitles after the change.
    package var entitled: Bool
    /// The current period's end.
    package var expiresAt: Date?
    /// When Apple signed the fact that caused the change (a change of owner: when it was made).
    package var occurredAt: Date
    /// The owner the purchase had before a `<kind>.transferred` event; nil for every other event.
    package var previousUserID: String?

    /// Creates an event; the id is derived from what changed, so the same change always has the same id: from `identity`
    /// when given (with the type), else from the event's fields.
    package init(
        type: String, appAccountToken: String?, productID: String?, environment: String, originalTransactionID: String,
        transactionID: String?, entitled: Bool, expiresAt: Date?, occurredAt: Date, previousUserID: String? = nil, identity: [String]? = nil
    ) {
        self.type = type
        self.appAccountToken = appAccountToken
        self.productID = productID
        self.environment = environment
        self.originalTransactionID = originalTransactionID
        self.transactionID = transactionID
        self.entitled = entitled
        self.expiresAt = expiresAt
        self.occurredAt = occurredAt
        self.previousUserID = previousUserID
        self.id = Self.stableID(
            identity.map { [type] + $0 } ?? [
                type, environment, originalTransactionID, transactionID ?? "", productID ?? "", entitled ? "1" : "0",
                expiresAt.map { String(Int64($0.timeIntervalSince1970 * 1000)) } ?? "", String(Int64(occurredAt.timeIntervalSince1970 * 1000)),
            ]
        )
    }

    /// A name-based UUID (SHA-256 of the parts, version 5 layout).
    static func stableID(_ parts: [String]) -> UUID {
        var bytes = Array(SHA256Digest.of(parts.joined(separator: "\u{1F}")).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
