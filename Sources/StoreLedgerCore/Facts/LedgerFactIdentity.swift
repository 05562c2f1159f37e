/// What makes two facts the same fact, for deduplication.
public enum LedgerFactIdentity: Hashable, Sendable {
    /// A notification, by its UUID: Apple's retries resend it with the same UUID.
    case notification(NotificationUUID)
    /// Any other fact, by its decoded content: the same JWS always decodes to the same content.
    case content(LedgerFact)
}
