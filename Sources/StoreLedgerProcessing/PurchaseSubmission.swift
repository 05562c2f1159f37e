public import StoreLedgerCore
public import StoreLedgerStore

/// The result of submitting a signed transaction through ``PurchaseIntake``.
public enum PurchaseSubmission: Sendable {
    /// Verified, recorded and projected.
    case accepted(Accepted)
    /// Can never verify (forged, another app, wrong environment, malformed); recorded as `rejected`.
    case rejected(reason: String)
    /// Could not be verified now (e.g. a retryable verification failure); the workers will retry it.
    case deferred(reason: String)

    /// A verified transaction and what it changed.
    public struct Accepted: Sendable {
        /// The event that recorded it.
        public var eventID: EventID
        /// The verified transaction.
        public var transaction: TransactionPayload
        /// Its subscription or purchase row after projection.
        public var entitlement: Entitlement?
        /// Whom it is linked to (nil when no user could be determined).
        public var owner: UserID?
        /// What linking changed.
        public var link: UserLinkChange?
    }
}
