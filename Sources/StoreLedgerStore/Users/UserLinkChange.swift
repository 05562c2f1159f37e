package import StoreLedgerCore

/// What linking a purchase to a user changed.
package enum UserLinkChange: Sendable, Equatable {
    /// The purchase had no owner; now it has.
    case linked
    /// The purchase already belonged to this user.
    case unchanged
    /// The purchase belonged to another user and was transferred (policy: the latest claimant owns it).
    case transferred(from: UserID)
}
