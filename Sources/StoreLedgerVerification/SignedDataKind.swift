/// What a piece of App Store signed data is, judged from its payload's shape.
package enum SignedDataKind: String, Hashable, Sendable, CaseIterable {
    /// An App Store Server Notification V2 `signedPayload`.
    case notification
    /// A `JWSTransaction`.
    case transaction
    /// A `JWSRenewalInfo`.
    case renewalInfo
    /// An `AppTransaction`.
    case appTransaction
}
