package import StoreLedgerCore
package import StoreLedgerStore

/// The result of submitting a signed transaction through ``PurchaseIntake``.
package enum PurchaseSubmission: Sendable {
    /// Verified, recorded and projected.
    case accepted(Accepted)
    /// Can never verify (forged, another app, wrong environment, malformed); recorded as `rejected`.
    case rejected(reason: String)
    /// Could not be verified now (e.g. a retryable verification failure); the workers will retry it.
    case deferred(reason: String)

    /// A verified transaction and what it changed.
    package struct Accepted: Sendable {
        /// The event that recorded it.
        package var eventID: EventID
        /// The verified transaction.
        package var transaction: TransactionPayload
        /// Its subscription or purchase row after projection.
        package var entitlement: Entitlement?
        /// Whom it is linked to (nil when no user could be determined).
        package var owner: UserID?
        /// What linking changed.
        package var link: UserLinkChange?
    }
}
