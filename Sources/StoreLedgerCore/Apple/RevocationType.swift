/// How a transaction was revoked (`revocationType`), open to new values.
public struct RevocationType: OpenStringValue {
    /// The raw value Apple sent.
    public let rawValue: String

    /// Wraps any raw value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A full refund.
    public static let refundFull = Self(rawValue: "REFUND_FULL")

    /// A prorated refund; see the revocation percentage.
    public static let refundProrated = Self(rawValue: "REFUND_PRORATED")

    /// Family Sharing access was revoked.
    public static let familyRevoke = Self(rawValue: "FAMILY_REVOKE")
}
